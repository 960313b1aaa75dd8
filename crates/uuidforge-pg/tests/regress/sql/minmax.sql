-- min and max of uuid and uuid192 (src/minmax.rs) against what ORDER BY
-- ... LIMIT 1 answers, on 10^5 random and v7 values with NULLs, on empty
-- sets, per group, as window functions, in parallel plans and over an
-- index; the casts between uuid and bytea.
SELECT setseed(0.5);
-- The plan of a query, for what it holds (its text differs between versions).
CREATE FUNCTION mm_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE p json;
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO p;
  RETURN p::text;
END $$;
CREATE TABLE mm (n int, g int, id uuid);
INSERT INTO mm
SELECT n, n % 7,
       CASE WHEN n % 100 = 0 THEN NULL
            WHEN n % 2 = 0 THEN md5(random()::text)::uuid
            ELSE uuidv7_at(timestamptz '2024-01-01' + random() * interval '3 years') END
FROM generate_series(1, 100000) n;
-- The whole table, every group, and the empty set.
SELECT (SELECT min(id) FROM mm) = (SELECT id FROM mm WHERE id IS NOT NULL ORDER BY id LIMIT 1) AS min_all,
       (SELECT max(id) FROM mm) = (SELECT id FROM mm WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) AS max_all,
       (SELECT count(*) FROM mm WHERE id IS NULL) AS nulls;
SELECT count(*) AS groups,
       count(*) FILTER (WHERE lo = (SELECT id FROM mm x WHERE x.g = a.g AND id IS NOT NULL ORDER BY id LIMIT 1)
                          AND hi = (SELECT id FROM mm x WHERE x.g = a.g AND id IS NOT NULL ORDER BY id DESC LIMIT 1)) AS agree
FROM (SELECT g, min(id) AS lo, max(id) AS hi FROM mm GROUP BY g) a;
SELECT min(id) IS NULL AS empty_min, max(id) IS NULL AS empty_max FROM mm WHERE false;
SELECT min(id) IS NULL AS only_nulls_min, max(id) IS NULL AS only_nulls_max FROM mm WHERE id IS NULL;
-- A window: the running maximum.
SELECT count(*) FILTER (WHERE running IS DISTINCT FROM (SELECT id FROM mm y WHERE y.n <= x.n AND y.id IS NOT NULL ORDER BY id DESC LIMIT 1)) AS running_max_differs
FROM (SELECT n, max(id) OVER (ORDER BY n) AS running FROM mm WHERE n <= 300) x;
-- In parallel: partial aggregates combined.
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT strpos(p, '"Node Type": "Gather"') > 0 AND strpos(p, '"Partial Mode": "Partial"') > 0 AS partial_aggregates
FROM mm_plan('SELECT min(id), max(id) FROM mm') p;
SELECT min(id) = (SELECT id FROM mm WHERE id IS NOT NULL ORDER BY id LIMIT 1) AS parallel_min,
       max(id) = (SELECT id FROM mm WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) AS parallel_max
FROM mm;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
-- Over a b-tree index: one end of it read, as for ORDER BY id DESC LIMIT 1.
CREATE INDEX ON mm (id);
ANALYZE mm;
SELECT strpos(p, '"Node Type": "Index Only Scan"') > 0 AND strpos(p, '"Scan Direction": "Backward"') > 0
       AND strpos(p, 'Aggregate') = 0 AS one_end_of_the_index
FROM mm_plan('SELECT max(id) FROM mm') p;
SELECT max(id) = (SELECT id FROM mm WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) AS indexed_max FROM mm;
-- uuid192: the same against its own order.
CREATE TABLE mm192 AS SELECT n, CASE WHEN id IS NULL THEN NULL ELSE uuid192(id, n) END AS v FROM mm;
SELECT (SELECT min(v) FROM mm192) = (SELECT v FROM mm192 WHERE v IS NOT NULL ORDER BY v LIMIT 1) AS min192,
       (SELECT max(v) FROM mm192) = (SELECT v FROM mm192 WHERE v IS NOT NULL ORDER BY v DESC LIMIT 1) AS max192,
       (SELECT min(v) IS NULL FROM mm192 WHERE false) AS empty192;
DROP TABLE mm, mm192;
DROP FUNCTION mm_plan(text);

-- The casts: a UUID's 16 bytes and back, explicit only.
SELECT '017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid::bytea;
SELECT '\x017f22e279b07cc398c4dc0c0c07398f'::bytea::uuid;
SELECT count(*) FILTER (WHERE u::bytea <> uuid_send(u) OR u::bytea::uuid <> u) AS round_trips_differ
FROM (SELECT md5(n::text)::uuid AS u FROM generate_series(1, 1000) n) s;
SELECT castcontext FROM pg_cast WHERE (castsource, casttarget) IN (('uuid'::regtype, 'bytea'::regtype), ('bytea'::regtype, 'uuid'::regtype));
\set VERBOSITY default
SELECT '\x017f22e279b07cc398c4dc0c0c0739'::bytea::uuid;
SELECT ''::bytea::uuid;

-- base32hex (PostgreSQL 19's encode(id::bytea, 'base32hex'), unpadded):
-- Python's base64.b32hexencode gives the same texts for these values.
SELECT u, uuid_to_base32hex(u) FROM (VALUES ('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid),
  ('00000000-0000-0000-0000-000000000000'), ('ffffffff-ffff-ffff-ffff-ffffffffffff'),
  ('018570bb-4a7d-7000-8000-000000000000')) v (u);
SELECT uuid_from_base32hex('05vi5ojpm1uc7664rg60o1pphs======'), uuid_from_base32hex(' 05VI5OJPM1UC7664RG60O1PPHS ');
SELECT count(*) FILTER (WHERE uuid_from_base32hex(uuid_to_base32hex(u)) <> u) AS round_trips_differ,
       count(*) FILTER (WHERE (uuid_to_base32hex(u) COLLATE "C" < uuid_to_base32hex(w) COLLATE "C") <> (u < w)) AS order_differs
FROM (SELECT md5(n::text)::uuid AS u, md5((n + 1)::text)::uuid AS w FROM generate_series(1, 2000) n) s;
SELECT uuid_from_base32hex('05VI5OJPM1UC7664RG60O1PPHT');
SELECT uuid_from_base32hex('05VI5OJPM1UC7664RG60O1PPHW');
SELECT uuid_from_base32hex('05VI5OJPM1UC7664RG60O1PPH');

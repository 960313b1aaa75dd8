-- The drop-ins for pg_uuidv7 and pg_idkit (src/compat.rs): their names,
-- signatures, volatility, strictness and parallel safety as the originals
-- declare them, their answers, and the errors where the originals answer
-- garbage. pg_uuidv7's own suite runs against the drop-in too (regress.sh).
SELECT p.oid::regprocedure AS function, pg_get_function_result(p.oid) AS returns,
       p.provolatile, p.proisstrict, p.proparallel, pg_get_function_arguments(p.oid) AS arguments
FROM pg_proc p
WHERE p.pronamespace IN ('uuidforge_pg_uuidv7'::regnamespace, 'uuidforge_pg_idkit'::regnamespace)
ORDER BY p.oid::regprocedure::text COLLATE "C";

SET search_path = uuidforge_pg_uuidv7, uuidforge_pg_idkit, public;
SET TimeZone = 'UTC';

-- pg_uuidv7: times in and out, to the millisecond.
SELECT uuid_v7_to_timestamptz('018570bb-4a7d-7000-8000-000000000000');
SELECT uuid_v7_to_timestamp('018570bb-4a7d-7fff-bfff-ffffffffffff');
SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637999+00', true);
SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00', zero => true);
-- A timestamp is read as UTC whatever the session's time zone.
SET TimeZone = 'America/New_York';
SELECT uuid_timestamp_to_v7('2023-01-02 04:26:40.637', true);
SELECT uuid_v7_to_timestamp('018570bb-4a7d-7000-8000-000000000000');
SELECT uuid_v7_to_timestamptz('018570bb-4a7d-7000-8000-000000000000');
SET TimeZone = 'UTC';
-- Below the millisecond, uuidv7_at's fresh counter and random bits: all
-- distinct, all of that millisecond, all v7 of the RFC variant.
SELECT count(*) AS values, count(DISTINCT u) AS distinct_values,
       bool_and(uuid_v7_to_timestamptz(u) = '2023-01-02 04:26:40.637+00') AS same_millisecond,
       bool_and(uuid_extract_version(u) = 7) AS v7
FROM (SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00') AS u FROM generate_series(1, 1000) n) s;
-- uuid_generate_v7(): increasing within the session, within a millisecond
-- too (pg_uuidv7's are random below it).
SELECT count(*) FILTER (WHERE u <= prev) AS out_of_order, count(DISTINCT u) AS distinct_values
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev
      FROM (SELECT n, uuid_generate_v7() AS u FROM generate_series(1, 10000) n) s) t;
-- STRICT as pg_uuidv7's: NULL in, NULL out.
SELECT uuid_timestamptz_to_v7(NULL) IS NULL AS a, uuid_timestamptz_to_v7(now(), NULL) IS NULL AS b,
       uuid_v7_to_timestamptz(NULL) IS NULL AS c;
-- Where pg_uuidv7 wraps a time around, an error names the value.
\set VERBOSITY default
SELECT uuid_timestamptz_to_v7('1969-12-31 23:59:59.999+00');
SELECT uuid_timestamptz_to_v7('infinity');
SELECT uuid_timestamp_to_v7('10889-08-02 05:31:50.656', true);
SELECT uuid_timestamp_to_v7('10889-08-02 05:31:50.655', true);

-- pg_idkit's UUIDv7 cases (src/uuid_v7.rs of https://github.com/VADOSWARE/pg_idkit,
-- restated): 36 characters, 16 bytes, version 7, a time extracted from a
-- fresh value within a second of now, and from an existing UUID.
SELECT length(idkit_uuidv7_generate()) AS text_length,
       length(uuid_send(idkit_uuidv7_generate_uuid())) AS bytes,
       substr(idkit_uuidv7_generate_text(), 15, 1) AS version,
       abs(extract(epoch FROM clock_timestamp() - idkit_uuidv7_extract_timestamptz(idkit_uuidv7_generate()))) < 1 AS within_a_second;
-- The existing UUID of pg_idkit's case is a v6: its time to the microsecond
-- (pg_idkit drops the fraction of the second).
SELECT idkit_uuidv7_extract_timestamptz('016b0dd7-0cbb-691e-8548-9888e89d0527');
SELECT idkit_uuidv7_extract_timestamptz('{018570BB-4A7D-7000-8000-000000000000}'),
       idkit_uuidv7_extract_timestamptz('urn:uuid:018570bb-4a7d-7000-8000-000000000000'),
       idkit_uuidv7_extract_timestamptz('018570bb4a7d70008000000000000000');
-- Text and uuid values of one session increase together.
SELECT count(*) FILTER (WHERE b <= a OR c::uuid <= b) AS out_of_order
FROM (SELECT idkit_uuidv7_generate_uuid() AS a, idkit_uuidv7_generate_uuid() AS b,
             idkit_uuidv7_generate() AS c FROM generate_series(1, 1000)) s;
-- Where pg_idkit fails with an opaque message: the value and what was expected.
SELECT idkit_uuidv7_extract_timestamptz('not a uuid');
SELECT idkit_uuidv7_extract_timestamptz('9b2f8e0c-43b5-4d6e-a6a1-9ee56e1d1a3b');

-- A schema written for pg_uuidv7 runs unchanged with the drop-in on the
-- search_path, and a role without any privilege of its own calls it.
CREATE TABLE compat_orders (id uuid PRIMARY KEY DEFAULT uuid_generate_v7(), placed timestamptz);
SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'compat_orders'::regclass;
CREATE ROLE uuidforge_regress_compat;
GRANT INSERT, SELECT ON compat_orders TO uuidforge_regress_compat;
SET ROLE uuidforge_regress_compat;
INSERT INTO compat_orders (placed) SELECT now() FROM generate_series(1, 3);
SELECT count(*), bool_and(uuid_v7_to_timestamptz(id) <= clock_timestamp()) FROM compat_orders;
RESET ROLE;
DROP TABLE compat_orders;
DROP ROLE uuidforge_regress_compat;
RESET search_path;

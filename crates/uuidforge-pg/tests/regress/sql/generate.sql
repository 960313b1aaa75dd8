-- uuidv7(), its profiles, uuidv7(shift), uuidv7_at, uuidv6, uuidv4.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';

-- Version 7, RFC variant, strictly increasing within a statement and across
-- statements, time close to the clock.
CREATE TEMP TABLE g AS
    SELECT n, uuidv7() AS id FROM generate_series(1, 100000) n;
SELECT count(*) = 100000 AS all_v7
FROM g WHERE uuid_extract_version(id) = 7;
SELECT bool_and(id > prev) AS strictly_increasing, count(DISTINCT id) AS distinct_ids
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM g) s WHERE prev IS NOT NULL;
SELECT (SELECT id FROM g ORDER BY id DESC LIMIT 1) < uuidv7() AS next_statement_is_larger;
SELECT abs(extract(epoch FROM uuid_extract_timestamp(uuidv7()) - clock_timestamp())) < 1 AS time_is_now;

-- Every profile: valid v7, and still increasing when the profile changes
-- between values (all profiles continue from the last value).
SHOW uuidforge.profile;
CREATE TEMP TABLE p (n serial, profile text, id uuid);
DO $$
DECLARE
    prof text;
BEGIN
    FOR i IN 1..2000 LOOP
        prof := (ARRAY['default', 'counter42', 'pg18', 'random'])[1 + i % 4];
        PERFORM set_config('uuidforge.profile', prof, true);
        INSERT INTO p (profile, id) VALUES (prof, uuidv7());
    END LOOP;
END
$$;
SELECT profile, count(*), bool_and(uuid_extract_version(id) = 7) AS v7
FROM p GROUP BY profile ORDER BY profile;
SELECT bool_and(id > prev) AS increasing_across_profiles
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM p) s WHERE prev IS NOT NULL;
-- Any name can be set (a registered profile is looked up when used); an
-- unknown one is refused at the first uuidv7(), naming the setting.
SELECT error_of($$SET LOCAL uuidforge.profile = 'bogus'; SELECT uuidv7()$$);

-- pg18 encodes the time below the millisecond (12-bit fraction, PostgreSQL
-- 18's layout): read with the fraction12 layout it is within the
-- millisecond the plain reading gives.
SET uuidforge.profile = 'pg18';
SELECT bool_and(f >= ms AND f < ms + interval '1 millisecond') AS fraction_within_ms,
       count(DISTINCT f) > 1 AS sub_ms_values_differ
FROM (SELECT uuid_extract_timestamp(id) AS ms, uuid_extract_timestamp(id, 'fraction12') AS f
      FROM (SELECT uuidv7() AS id FROM generate_series(1, 20000)) s) t;
RESET uuidforge.profile;

-- uuidv7(shift): PostgreSQL 18's signature, calendar arithmetic.
SELECT abs(extract(epoch FROM uuid_extract_timestamp(uuidv7('-1 hour')) - (clock_timestamp() - interval '1 hour'))) < 1 AS shifted_back;
SELECT abs(extract(epoch FROM uuid_extract_timestamp(uuidv7('1 month')) - (clock_timestamp() + interval '1 month'))) < 1 AS shifted_a_month;
SELECT bool_and(id > prev) AS same_shift_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
      FROM (SELECT n, uuidv7('-10 days') AS id FROM generate_series(1, 10000) n) s) t
WHERE prev IS NOT NULL;
SELECT uuidv7(NULL::interval) IS NULL AS strict;
-- (the shifted time in the message depends on the clock)
SELECT regexp_replace(error_of($$SELECT uuidv7('-100 years')$$), '-\d+ ms', 'N ms');
SELECT error_of($$SELECT uuidv7('9000 years')$$);
SELECT error_of($$SELECT uuidv7('-300000 years')$$);

-- uuidv7_at: backfill at an explicit time, leaves uuidv7()'s order alone.
SELECT uuid_extract_timestamp(uuidv7_at('2024-05-01 12:00:00.123456+00')) AS backfilled;
SELECT uuidv7_at('2024-05-01 12:00:00+00') < uuidv7() AS backfill_is_older;
SELECT count(DISTINCT uuidv7_at('2024-05-01 12:00:00+00')) AS distinct_backfills
FROM generate_series(1, 1000);
SELECT uuidv7_at(NULL) IS NULL AS strict;
SELECT error_of($$SELECT uuidv7_at('1969-12-31 23:59:59.999+00')$$);
SELECT error_of($$SELECT uuidv7_at('infinity')$$);
SELECT error_of($$SELECT uuidv7_at('-infinity')$$);
SELECT uuid_extract_timestamp(uuidv7_at('1970-01-01 00:00:00+00')) AS epoch;

-- uuidv6 and uuidv4.
SELECT uuid_extract_version(uuidv6()) AS v6, uuid_extract_version(uuidv4()) AS v4;
SELECT bool_and(id > prev) AS v6_increasing
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
      FROM (SELECT n, uuidv6() AS id FROM generate_series(1, 10000) n) s) t
WHERE prev IS NOT NULL;
SELECT abs(extract(epoch FROM uuid_extract_timestamp_v6(uuidv6()) - clock_timestamp())) < 1 AS v6_time_is_now;
SELECT count(DISTINCT uuidv4()) AS distinct_v4 FROM generate_series(1, 10000);

-- Volatility and strictness as declared (the extension's own functions:
-- PostgreSQL 18 has some of these names in pg_catalog too).
SELECT proname, provolatile, proisstrict, proparallel
FROM pg_proc
WHERE pronamespace = (SELECT extnamespace FROM pg_extension WHERE extname = 'uuidforge')
  AND proname IN ('uuidv7', 'uuidv7_at', 'uuidv7_from', 'uuidv6', 'uuidv4', 'uuidv7_next', 'uuid_v7_last',
                  'uuid_extract_timestamp', 'uuid_extract_timestamp_v6', 'uuid_extract_version', 'uuid_to_base32',
                  'uuid_from_base32', 'uuidv7_boundary', 'uuidv7_partition_key',
                  'uuidv7_range_lower', 'uuidv7_range_upper', 'uuidv7_is_plausible')
ORDER BY proname, pronargs, proargtypes::text;

-- uuidv7_from (E8, Data Vault hub keys): the same time, key and secret give
-- the same UUIDv7 carrying that millisecond; a short secret is refused.
SELECT a = b AS same, a <> c AS other_key_differs, uuid_extract_version(a) AS version,
       uuid_extract_timestamp(a) = '2022-02-22 19:22:22.123+00' AS carries_time, a < d AS sorts_by_time
FROM (SELECT uuidv7_from('2022-02-22 19:22:22.123+00', 'orders:42', decode(repeat('ab', 32), 'hex')) AS a,
             uuidv7_from('2022-02-22 19:22:22.123+00', 'orders:42', decode(repeat('ab', 32), 'hex')) AS b,
             uuidv7_from('2022-02-22 19:22:22.123+00', 'orders:43', decode(repeat('ab', 32), 'hex')) AS c,
             uuidv7_from('2022-02-22 19:22:22.124+00', 'orders:1', decode(repeat('ab', 32), 'hex')) AS d) AS t;
SELECT uuidv7_from(now(), 'orders:42', '\x0001'::bytea);

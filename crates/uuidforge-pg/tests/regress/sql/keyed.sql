-- Issue 15: every generator feature in SQL.

-- E8: uuidv7_from(at, key) is immutable and matches the documented key
-- material (the vector was recomputed with Python's hmac module; the CLI and
-- the HTTP API give the same value, tests/cli_generator_features.rs).
SELECT uuidv7_from('2022-02-22 19:22:22+00', 'orders:42') AS text_key,
       uuidv7_from('2022-02-22 19:22:22+00', 'orders:42'::bytea) AS bytea_key;
SELECT uuidv7_from('2022-02-22 19:22:22+00', 'orders:42') = '017f22e2-79b0-7496-923e-225cc233cada' AS python_vector;
SELECT provolatile, count(*) FROM pg_proc WHERE proname = 'uuidv7_from' GROUP BY 1;
-- Ordered by time, then (bigint keys) by the key itself.
SELECT bool_and(a < b) AS time_first
FROM (SELECT uuidv7_from(t, 'k' || n) AS a, uuidv7_from(t + interval '1 ms', 'k' || (n + 1)) AS b
      FROM generate_series(1, 200) n, (VALUES (timestamptz '2024-05-01 12:00:00+00')) v(t)) s;
SELECT bool_and(uuidv7_from(t, n) < uuidv7_from(t, n + 1)) AS key_order
FROM generate_series(1, 200) n, (VALUES (timestamptz '2024-05-01 12:00:00+00')) v(t);
SELECT uuidv7_from(t, 7) AS bigint_key, uuid_extract_timestamp(uuidv7_from(t, 7)) = t AS carries_time
FROM (VALUES (timestamptz '2024-05-01 12:00:00.123+00')) v(t);
SELECT error_of($$SELECT uuidv7_from('1969-12-31 23:59:59+00', 'k')$$);
SELECT error_of($$SELECT uuidv7_from(now(), 'k', 'short'::bytea)$$);

-- E10: hide and reveal round-trip, hide v7 only, keys of 32 bytes or more.
CREATE TEMP TABLE hide_key AS SELECT decode(repeat('5a', 32), 'hex') AS k;
SELECT uuid_hide('01a20c5c-4e80-7079-9de4-d6ca486f4fc8', k) AS hidden,
       uuid_extract_version(uuid_hide('01a20c5c-4e80-7079-9de4-d6ca486f4fc8', k)) AS version,
       uuid_reveal(uuid_hide('01a20c5c-4e80-7079-9de4-d6ca486f4fc8', k), k) = '01a20c5c-4e80-7079-9de4-d6ca486f4fc8' AS round_trip
FROM hide_key;
SELECT count(*) FILTER (WHERE uuid_reveal(uuid_hide(u, k), k) = u) AS round_trips,
       count(DISTINCT uuid_hide(u, k)) AS distinct_hidden
FROM (SELECT uuidv7() AS u FROM generate_series(1, 500)) s, hide_key;
SELECT error_of($$SELECT uuid_hide(uuidv7(), '\x0102'::bytea)$$);
SELECT error_of($$SELECT uuid_hide('919108f7-52d1-4320-9bac-f847db4148a8', decode(repeat('5a', 32), 'hex'))$$);
SELECT error_of($$SELECT uuid_reveal('01a20c5c-4e80-7079-9de4-d6ca486f4fc8', decode(repeat('5a', 32), 'hex'))$$);

-- E11: uuidv8_shard with the layout from the setting.
SELECT error_of($$SELECT uuidv8_shard(1)$$);
SET uuidforge.shard_layout = '{"node_bits": 10, "counter_bits": 14}';
SELECT uuid_extract_version(u) AS version,
       ((('x' || substr(replace(u::text, '-', ''), 14, 3))::bit(12)::int) >> 2) AS node
FROM (SELECT uuidv8_shard(513) AS u) s;
SELECT bool_and(a < b) AS increasing FROM (
    SELECT u AS a, lead(u) OVER (ORDER BY n) AS b
    FROM (SELECT n, uuidv8_shard(7) AS u FROM generate_series(1, 300) n) s) t WHERE b IS NOT NULL;
SELECT error_of($$SELECT uuidv8_shard(1024)$$);
SELECT error_of($$SELECT uuidv8_shard(-1)$$);
SET uuidforge.shard_layout = '{"node_bits": 70, "counter_bits": 14}';
SELECT error_of($$SELECT uuidv8_shard(1)$$);
SET uuidforge.shard_layout = '{"node_bits": 10}';
SELECT error_of($$SELECT uuidv8_shard(1)$$, false);
RESET uuidforge.shard_layout;

-- B13: registered profiles.
SELECT uuidforge_profile_register('wide_counter', '{"counter_bits": 30, "guard_bits": 2}') ->> 'counter_bits' AS counter_bits;
SELECT name, config ->> 'guard_bits' AS guard_bits FROM uuidforge_profiles;
SET uuidforge.profile = 'wide_counter';
SELECT bool_and(a < b) AS increasing FROM (
    SELECT u AS a, lead(u) OVER (ORDER BY n) AS b
    FROM (SELECT n, uuidv7() AS u FROM generate_series(1, 1000) n) s) t WHERE b IS NOT NULL;
RESET uuidforge.profile;
SELECT error_of($$SELECT uuidforge_profile_register('bad', '{"counter_bits": 90}')$$);
SELECT error_of($$SELECT uuidforge_profile_register('bad', '{"colour": "red"}')$$, false);
SELECT error_of($$SELECT uuidforge_profile_register('pg18', '{}')$$);
SELECT error_of($$SELECT uuidforge_profile_register('Bad Name', '{}')$$);
SELECT error_of($$SELECT uuidforge_profile_register('mine', '{"name": "other"}')$$);
SET uuidforge.profile = 'nowhere';
SELECT error_of($$SELECT uuidv7()$$);
RESET uuidforge.profile;
SELECT uuidforge_profile_drop('wide_counter') AS dropped, uuidforge_profile_drop('wide_counter') AS again;

-- E4: the telemetry lists every figure.
SELECT metric, profile FROM uuidforge_telemetry() ORDER BY 1, 2;
SELECT value > 0 AS counted FROM uuidforge_telemetry() WHERE metric = 'generated' AND profile = 'v8_shard';

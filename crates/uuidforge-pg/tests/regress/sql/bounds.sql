-- Boundaries, tstzrange bounds, partition keys.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
SELECT uuidv7_boundary('2022-02-22 19:22:22+00', false) AS lowest,
       uuidv7_boundary('2022-02-22 19:22:22.000999+00', true) AS highest;
-- The A.6 vector lies between the boundaries of its millisecond.
SELECT '017F22E2-79B0-7CC3-98C4-DC0C0C07398F'::uuid
       BETWEEN uuidv7_boundary('2022-02-22 19:22:22+00', false)
           AND uuidv7_boundary('2022-02-22 19:22:22+00', true) AS brackets_a6;
SELECT error_of($$SELECT uuidv7_boundary('1969-01-01', false)$$);
SELECT error_of($$SELECT uuidv7_boundary('infinity', true)$$);

-- A time range as a half-open UUID range.
SELECT r, uuidv7_range_lower(r) AS lower, uuidv7_range_upper(r) AS upper
FROM (VALUES
    ('[2024-01-01, 2024-02-01)'::tstzrange),
    ('[2024-01-01, 2024-02-01]'),
    ('(2024-01-01 00:00:00.0005, 2024-01-01 00:00:00.0015)'),
    ('[2024-01-01,)'),
    ('(,2024-01-01)'),
    ('[-infinity, infinity]'),
    ('[1960-01-01, 1965-01-01)'),
    ('empty')) v(r);
-- Exactly the values whose millisecond lies in the range.
CREATE TEMP TABLE ev AS
SELECT t, uuidv7_at(t) AS id
FROM (VALUES ('2023-12-31 23:59:59.999+00'::timestamptz), ('2024-01-01 00:00:00+00'),
             ('2024-01-15 12:00:00+00'), ('2024-01-31 23:59:59.999+00'),
             ('2024-02-01 00:00:00+00')) v(t);
CREATE INDEX ON ev (id);
SELECT t FROM ev
WHERE id >= uuidv7_range_lower('[2024-01-01, 2024-02-01)')
  AND id < uuidv7_range_upper('[2024-01-01, 2024-02-01)')
ORDER BY t;
-- Immutable, so the planner folds the bounds into an index condition.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT t FROM ev
WHERE id >= uuidv7_range_lower('[2024-01-01, 2024-02-01)')
  AND id < uuidv7_range_upper('[2024-01-01, 2024-02-01)');
RESET enable_seqscan;

-- Partition keys: the left bits of the UUID; for a time, the key its
-- UUIDv7 will have.
SELECT uuidv7_partition_key('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'::uuid, 16) AS key16,
       to_hex(uuidv7_partition_key('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'::uuid, 48)) AS key48,
       uuidv7_partition_key('2022-02-22 19:22:22+00'::timestamptz, 16) AS key16_at;
SELECT bool_and(uuidv7_partition_key(uuidv7_at(t), 17) = uuidv7_partition_key(t, 17)) AS keys_agree
FROM generate_series('2020-01-01'::timestamptz, '2030-01-01', '7 days 3 hours') t;
SELECT error_of($$SELECT uuidv7_partition_key(uuidv7(), 0)$$);
SELECT error_of($$SELECT uuidv7_partition_key(uuidv7(), 49)$$);
SELECT error_of($$SELECT uuidv7_partition_key('1969-07-20'::timestamptz, 17)$$);

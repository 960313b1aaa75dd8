-- uuid_extract_timestamp / uuid_extract_version on the RFC 9562 appendix
-- vectors, and Crockford Base32.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
CREATE TEMP TABLE vectors (name text, id uuid);
INSERT INTO vectors VALUES
    ('A.1 v1', 'C232AB00-9414-11EC-B3C8-9F6BDECED846'),
    ('A.2 v3', '5df41881-3aed-3515-88a7-2f4a814cf09e'),
    ('A.3 v4', '919108f7-52d1-4320-9bac-f847db4148a8'),
    ('A.4 v5', '2ed6657d-e927-568b-95e1-2665a8aea6a2'),
    ('A.5 v6', '1EC9414C-232A-6B00-B3C8-9F6BDECED846'),
    ('A.6 v7', '017F22E2-79B0-7CC3-98C4-DC0C0C07398F'),
    ('B.1 v8', '2489E9AD-2EE2-8E00-8EC9-32D5F69181C0'),
    ('B.2 v8', '5c146b14-3c52-8afd-938a-375d0df1fbf6'),
    ('nil', '00000000-0000-0000-0000-000000000000'),
    ('max', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'),
    ('NCS variant', '017F22E2-79B0-7CC3-18C4-DC0C0C07398F'),
    ('Microsoft variant', '017F22E2-79B0-7CC3-C8C4-DC0C0C07398F');
-- As PostgreSQL 18: a time for v1 and v7 only (NULL for v6, whose time
-- uuid_extract_timestamp_v6 reads).
SELECT name, uuid_extract_version(id) AS version, uuid_extract_timestamp(id) AS at,
       uuid_extract_timestamp_v6(id) AS v6_at, uuid_to_base32(id) AS base32
FROM vectors ORDER BY name;
SELECT bool_and(uuid_from_base32(uuid_to_base32(id)) = id) AS base32_round_trip FROM vectors;
-- Base32 sorts like the UUID.
SELECT bool_and((a.id < b.id) = (uuid_to_base32(a.id) < uuid_to_base32(b.id))) AS base32_order
FROM (SELECT uuidv7() AS id UNION ALL SELECT uuidv4() FROM generate_series(1, 200)) a,
     (SELECT uuidv4() AS id FROM generate_series(1, 50)) b;

-- v1/v6 keep their 100-ns time to the microsecond.
SELECT uuid_extract_timestamp('C232AB0A-9414-11EC-B3C8-9F6BDECED846') AS v1_plus_1us;
SELECT uuid_extract_timestamp_v6('1EC9414C-232A-6B0A-B3C8-9F6BDECED846') AS v6_plus_1us,
       uuid_extract_timestamp('1EC9414C-232A-6B0A-B3C8-9F6BDECED846') IS NULL AS v6_null_as_in_18;
-- v7 in a layout that encodes time below the millisecond: fraction 0x800
-- of the millisecond is 500 µs (PostgreSQL 18), 0x1F4 µs is 500 µs (MariaDB).
SELECT uuid_extract_timestamp('017F22E2-79B0-7800-8000-000000000000', 'fraction12') AS pg18_half_ms,
       uuid_extract_timestamp('017F22E2-79B0-71F4-8000-000000000000', 'micros') AS mariadb_500us,
       uuid_extract_timestamp('017F22E2-79B0-7800-8000-000000000000', 'counter42') AS counter_ms,
       uuid_extract_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846', 'fraction12') AS v1_unchanged;
SELECT error_of($$SELECT uuid_extract_timestamp('017F22E2-79B0-7800-8000-000000000000', 'nanos')$$);

-- Base32 input: any case, Crockford aliases, clear errors with position.
SELECT uuid_from_base32('01fwhe4ydgfk1shh6w1g60eecf') AS lower_case,
       uuid_from_base32('O1FWHE4YDGFKISHH6W1G6OEECF') AS aliases;
SELECT error_of($$SELECT uuid_from_base32('01FWHE4YDGFK1SHH6W1G60EECU')$$);
SELECT error_of($$SELECT uuid_from_base32('81FWHE4YDGFK1SHH6W1G60EECF')$$);
SELECT error_of($$SELECT uuid_from_base32('01FWHE4YDG')$$);
SELECT error_of($$SELECT uuid_from_base32('')$$);
SELECT uuid_from_base32(NULL) IS NULL AS strict;

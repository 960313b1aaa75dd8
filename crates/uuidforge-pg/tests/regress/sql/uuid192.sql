-- The uuid192 type (C1).
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
SELECT '017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b0'::uuid192 AS text_form;
SELECT '017F22E2-79B0-7CC3-98C4-DC0C0C07398F-103064088814F5B0'::uuid192 AS upper_case_input;
SELECT uuid192_to_base32('017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b0') AS base32;
SELECT uuid192_to_base32('017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b0')::uuid192 AS from_base32_text,
       uuid192_from_base32(uuid192_to_base32('017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b0')) AS from_base32;

-- Constructors and fields.
SELECT uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 3, 100, 2, 'insert', 4, 5) AS general,
       uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 3, 100, 2, 'Delete', 4, 5, true, true) AS marked,
       uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 12345) AS raw;
WITH v(k) AS (VALUES (uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 255, 4095, 63, 'restore', 63, 127, true, false)))
SELECT uuid192_uuid(k) AS uuid, k::uuid AS cast_to_uuid, uuid192_structure(k) AS structure,
       uuid192_module(k) AS module, uuid192_hub(k) AS hub, uuid192_source(k) AS source,
       uuid192_operation(k) AS operation, uuid192_message(k) AS message, uuid192_shard(k) AS shard,
       uuid192_archived(k) AS archived, uuid192_deleted(k) AS deleted, uuid192_payload(k) AS payload,
       to_hex(uuid192_segment(k)) AS segment, to_hex(uuid192_checksum(k)) AS checksum
FROM v;
WITH v(k) AS (VALUES (uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 17592186044415)))
SELECT uuid192_structure(k), uuid192_payload(k), uuid192_module(k) IS NULL AS no_module, uuid192_fields(k)
FROM v;
SELECT uuid192_fields('017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b0');
SELECT to_hex(uuid192_segment_of_text('zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz-103064088814f5b0')) AS segment_only;

-- Bad input: 22P02 naming the value; constructor arguments: 22023.
SELECT error_of($$SELECT '017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b1'::uuid192$$);
SELECT error_of($$SELECT '017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid192$$);
SELECT error_of($$SELECT '017f22e2-79b0-7cc3-98c4-dc0c0c07398f-10306408881xf5b0'::uuid192$$);
SELECT error_of($$SELECT 'f17f22e2-79b0-7cc3-98c4-dc0c0c07398f-f03064088814f5b0'::uuid192$$);
SELECT error_of($$SELECT uuid192_from_base32('0BZ5HRJZ9MNVBJ8DHD74GP3Q1NK1PM8YHKQKNGZ')$$);
SELECT error_of($$SELECT uuid192(uuidv7(), 256, 0, 0, 'none', 0, 0)$$);
SELECT error_of($$SELECT uuid192(uuidv7(), 0, 4096, 0, 'none', 0, 0)$$);
SELECT error_of($$SELECT uuid192(uuidv7(), 0, 0, 0, 'upsert', 0, 0)$$);
SELECT error_of($$SELECT uuid192(uuidv7(), 17592186044416)$$);
SELECT error_of($$SELECT uuid192(uuidv7(), -1)$$);
SELECT error_of($$SELECT uuid192_segment_of_text('short')$$);

-- Order: UUID first, then segment (the 24 bytes, as send() gives them).
CREATE TEMP TABLE k AS
SELECT n, uuid192(CASE WHEN n % 3 = 0 THEN '017F22E2-79B0-7CC3-98C4-DC0C0C07398F'::uuid ELSE uuidv4() END,
                  (n * 7919) % 256, n % 4096, n % 64, 'update', n % 64, n % 128) AS v
FROM generate_series(1, 3000) n;
SELECT bool_and(a.v < b.v) = true AS lt_matches_bytes, count(*) > 0 AS compared
FROM k a JOIN k b ON uuid192_send(a.v) < uuid192_send(b.v) AND a.n % 50 = 0 AND b.n % 50 = 1;
SELECT array_agg(n ORDER BY v) = array_agg(n ORDER BY uuid192_send(v)) AS order_by_matches_bytes FROM k;
SELECT count(*) AS same_uuid_rows, count(DISTINCT v) AS distinct_values
FROM k WHERE v::uuid = '017F22E2-79B0-7CC3-98C4-DC0C0C07398F';

-- B-tree index: range scans and lookups agree with a sequential scan.
CREATE INDEX k_btree ON k (v);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT n FROM k WHERE v = uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 3, 3, 3, 'update', 3, 3);
SELECT count(*) AS via_btree FROM k WHERE v >= uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 0) AND v < uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C073990', 0);
RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) AS via_seqscan FROM k WHERE v >= uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C07398F', 0) AND v < uuid192('017F22E2-79B0-7CC3-98C4-DC0C0C073990', 0);
RESET enable_indexscan; RESET enable_bitmapscan;
-- A unique index rejects a duplicate.
CREATE UNIQUE INDEX k_unique ON k (v);
SELECT error_of($$INSERT INTO k SELECT 0, v FROM k WHERE n = 1$$, false);

-- Hash index, hash join and hash aggregate.
CREATE INDEX k_hash ON k USING hash (v);
SET enable_seqscan = off; SET enable_bitmapscan = off;
-- (The plan's outer node, which every server version writes alike.)
DO $$
DECLARE plan json;
BEGIN
    EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) SELECT n FROM k WHERE v = (SELECT v FROM k WHERE n = 77)' INTO plan;
    RAISE NOTICE 'outer node: % using %', plan->0->'Plan'->>'Node Type', plan->0->'Plan'->>'Index Name';
END
$$;
SELECT n FROM k WHERE v = (SELECT v FROM k WHERE n = 77);
RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT count(*) AS hash_join_rows FROM k a JOIN k b ON a.v = b.v;
RESET enable_mergejoin; RESET enable_nestloop;
SET enable_sort = off;
SELECT count(*) AS groups FROM (SELECT v FROM k GROUP BY v) g;
RESET enable_sort;
SELECT bool_and((uuid192_hash(v)::bigint & 4294967295) = (uuid192_hash_extended(v, 0) & 4294967295))
           AS hash_is_low_bits_of_extended,
       count(DISTINCT uuid192_hash_extended(v, 1)) AS distinct_seeded
FROM k;

-- Binary send/receive: COPY in binary format round-trips; 16 bytes are refused.
COPY (SELECT v FROM k ORDER BY n) TO '/tmp/uuidforge_regress_k.bin' (FORMAT binary);
CREATE TEMP TABLE k2 (v uuid192);
COPY k2 FROM '/tmp/uuidforge_regress_k.bin' (FORMAT binary);
SELECT count(*) AS copied, (SELECT count(*) FROM k2 JOIN k USING (v)) AS matching FROM k2;
COPY (SELECT '017F22E2-79B0-7CC3-98C4-DC0C0C07398F'::uuid) TO '/tmp/uuidforge_regress_u.bin' (FORMAT binary);
SELECT error_of($$COPY k2 FROM '/tmp/uuidforge_regress_u.bin' (FORMAT binary)$$);
SELECT uuid192_send('017f22e2-79b0-7cc3-98c4-dc0c0c07398f-103064088814f5b0') AS bytes;

-- Joins with plain uuid tables through the cast.
CREATE TEMP TABLE plain AS SELECT v::uuid AS id FROM k WHERE n <= 10;
SELECT count(*) AS joined FROM k JOIN plain ON k.v::uuid = plain.id;

-- Sort support (C4): the direct comparator and abbreviated keys order
-- exactly like uuid192_cmp, in sorts and index builds, with and without.
CREATE TEMP TABLE sort192 AS
SELECT uuid192(CASE WHEN g % 7 = 0 THEN '018f3406-9e7b-7000-8000-000000001e45'::uuid ELSE uuidv7() END, g) AS k
FROM generate_series(1, 20000) g ORDER BY random();
SET uuidforge.uuid192_sortsupport = off;
CREATE TEMP TABLE without_ss AS SELECT row_number() OVER () AS n, k FROM (SELECT k FROM sort192 ORDER BY k) s;
SET uuidforge.uuid192_sortsupport = on;
CREATE TEMP TABLE with_ss AS SELECT row_number() OVER () AS n, k FROM (SELECT k FROM sort192 ORDER BY k) s;
SELECT count(*) AS rows, count(*) FILTER (WHERE a.k = b.k) AS same_place
FROM without_ss a JOIN with_ss b USING (n);
SELECT bool_and(uuid192_send(k) > uuid192_send(prev)) AS byte_order
FROM (SELECT k, lag(k) OVER (ORDER BY n) AS prev FROM with_ss) s WHERE prev IS NOT NULL;
CREATE INDEX sort192_k ON sort192 (k);
SET enable_seqscan = off;
SELECT count(*) AS found_through_index FROM with_ss w WHERE EXISTS (SELECT 1 FROM sort192 s WHERE s.k = w.k);
RESET enable_seqscan;
RESET uuidforge.uuid192_sortsupport;

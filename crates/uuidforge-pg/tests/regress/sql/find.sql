-- uuid_find: a UUID anywhere, through the planner the CLI and the HTTP API
-- use; SECURITY INVOKER: a role sees only what it may read.
CREATE SCHEMA find_test;
SET search_path = find_test, public;
CREATE TABLE customers (id uuid PRIMARY KEY, name text);
CREATE TABLE orders (id int PRIMARY KEY, customer uuid, tags uuid[], doc jsonb, note text, raw bytea, k192 uuid192);
CREATE TABLE "We""ird; <b>" ("Mixed Col" text);
CREATE TABLE secret (id uuid);
INSERT INTO customers VALUES ('01890a5d-ac96-774b-bcce-b302099a8057', 'a'), ('01890a5d-ac96-774b-bcce-b302099a8058', 'b');
INSERT INTO orders VALUES
  (1, '01890a5d-ac96-774b-bcce-b302099a8057', NULL, NULL, NULL, NULL, NULL),
  (2, NULL, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057'::uuid], '{"a": {"b": ["01890A5D-AC96-774B-BCCE-B302099A8057"]}}', NULL, NULL, NULL),
  (3, NULL, NULL, '{"01890a5d-ac96-774b-bcce-b302099a8057": 1}', 'see https://x.example/c/01890a5d-ac96-774b-bcce-b302099a8057?q=1', decode('01890a5dac96774bbcceb302099a8057', 'hex'), NULL),
  (4, '01890a5d-ac96-774b-bcce-b302099a8058', NULL, NULL, '01890a5d-ac96-774b-bcce-b302099a80570 is longer', NULL, NULL);
INSERT INTO "We""ird; <b>" VALUES ('{01890a5d-ac96-774b-bcce-b302099a8057}');
INSERT INTO secret VALUES ('01890a5d-ac96-774b-bcce-b302099a8057');
SELECT "table", "column", path, role, key, value
  FROM uuid_find('urn:uuid:01890a5d-ac96-774b-bcce-b302099a8057', ARRAY['find_test'])
 ORDER BY 1, 2, 3, 5::text;
-- Base32 spelling, every schema (only find_test holds it).
SELECT count(*) FROM uuid_find(uuid_to_base32('01890a5d-ac96-774b-bcce-b302099a8057'));
-- The token matcher uuidforge db find uses for many values at once.
SELECT uuid_text_holds_any(t, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057', '017f22e2-79b0-7cc3-98c4-dc0c0c07398f']::uuid[]) AS holds, t
  FROM (VALUES ('see URN:UUID:01890A5D-AC96-774B-BCCE-B302099A8057 here'),
               ('{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}'),
               ('017f22e279b07cc398c4dc0c0c07398f'),
               ('01FWHE4YDGFK1SHH6W1G60EECF'),
               ('x017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
               ('01890a5d-ac96-774b-bcce-b302099a8058'),
               ('no uuid at all')) v(t);
-- The page reader find uses when the extension is installed: candidate
-- rows (ctids) of a heap table, values compressed or out of line included.
CREATE TABLE apart (id int PRIMARY KEY, big text, doc jsonb, ext text, raw uuid);
ALTER TABLE apart ALTER COLUMN ext SET STORAGE EXTERNAL;
INSERT INTO apart VALUES
  (1, repeat('lorem ', 2000) || '01890A5D-AC96-774B-BCCE-B302099A8057', NULL, NULL, NULL),
  (2, NULL, jsonb_build_object('pad', repeat('x', 6000), 'k', uuid_to_base32('01890a5d-ac96-774b-bcce-b302099a8057')), NULL, NULL),
  (3, NULL, NULL, (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g) || '01890a5dac96774bbcceb302099a8057', NULL),
  (4, NULL, NULL, NULL, '01890a5d-ac96-774b-bcce-b302099a8057'),
  (5, 'nothing', '{"a": "5b0e1c9a-3d2f-4a61-8e07-c4b9d8a1f250"}', 'nothing', '5b0e1c9a-3d2f-4a61-8e07-c4b9d8a1f250');
SELECT pg_column_compression(big) AS big, pg_column_compression(doc) AS doc
  FROM apart WHERE id < 3 ORDER BY id;
SELECT pg_relation_size(reltoastrelid) > 0 AS ext_out_of_line FROM pg_class WHERE oid = 'apart'::regclass;
SELECT id FROM apart
 WHERE ctid = ANY ((SELECT uuid_heap_candidates('apart'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{2,3,4}', '{5}'))::tid[])
 ORDER BY id;
-- Columns not asked for are not searched.
SELECT cardinality(uuid_heap_candidates('apart'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{}', '{}'));
-- Refused: no values, a view, row-level security.
SELECT uuid_heap_candidates('apart'::regclass, '{}'::uuid[], '{2}', '{}');
CREATE VIEW apart_view AS SELECT * FROM apart;
SELECT uuid_heap_candidates('apart_view'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{2}', '{}');
CREATE TABLE guarded (body text);
ALTER TABLE guarded ENABLE ROW LEVEL SECURITY;
-- Invalid input names the value.
SELECT * FROM uuid_find('not-a-uuid');
-- A role without SELECT on secret: skipped with a notice, not an error.
CREATE ROLE find_reader;
GRANT USAGE ON SCHEMA find_test TO find_reader;
GRANT SELECT ON customers, orders, "We""ird; <b>" TO find_reader;
GRANT SELECT ON guarded TO find_reader;
SET ROLE find_reader;
SELECT "table", "column" FROM uuid_find('01890a5d-ac96-774b-bcce-b302099a8057', ARRAY['find_test']) ORDER BY 1, 2;
-- The page reader checks the caller's privileges, and row-level security.
SELECT uuid_heap_candidates('secret'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{}', '{1}');
SELECT uuid_heap_candidates('guarded'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{1}', '{}');
RESET ROLE;
DROP SCHEMA find_test CASCADE;
DROP ROLE find_reader;

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
-- Invalid input names the value.
SELECT * FROM uuid_find('not-a-uuid');
-- A role without SELECT on secret: skipped with a notice, not an error.
CREATE ROLE find_reader;
GRANT USAGE ON SCHEMA find_test TO find_reader;
GRANT SELECT ON customers, orders, "We""ird; <b>" TO find_reader;
SET ROLE find_reader;
SELECT "table", "column" FROM uuid_find('01890a5d-ac96-774b-bcce-b302099a8057', ARRAY['find_test']) ORDER BY 1, 2;
RESET ROLE;
DROP SCHEMA find_test CASCADE;
DROP ROLE find_reader;

-- The page reader on a heap PostgreSQL itself reads without error: dead
-- versions of updated and deleted rows, rows of rolled-back inserts, their
-- compressed and out-of-line values half reclaimed, before and after VACUUM.
-- Only the rows the statement's snapshot sees are candidates, and only
-- their values are decompressed.
CREATE SCHEMA heap_test;
SET search_path = heap_test, public;
CREATE TABLE dirty (id int PRIMARY KEY, doc jsonb, ext text);
ALTER TABLE dirty ALTER COLUMN ext SET STORAGE EXTERNAL;
ALTER TABLE dirty SET (autovacuum_enabled = false, toast.autovacuum_enabled = false);
CREATE FUNCTION pad(seed int) RETURNS text LANGUAGE sql AS
  $$ SELECT string_agg(md5((seed * 1000 + g)::text), '') FROM generate_series(1, 400) g $$;
INSERT INTO dirty VALUES
  (1, jsonb_build_object('pad', pad(1), 'k', '01890a5d-ac96-774b-bcce-b302099a8057'), NULL),
  (2, NULL, pad(2) || '01890a5d-ac96-774b-bcce-b302099a8057'),
  (3, jsonb_build_object('pad', pad(3), 'k', '01890a5d-ac96-774b-bcce-b302099a8057'), NULL);
-- Row 1 updated (its old version dead, its old document's chunks deleted),
-- row 2 deleted, a row inserted and rolled back.
UPDATE dirty SET doc = jsonb_build_object('pad', pad(4), 'k', 'none here') WHERE id = 1;
DELETE FROM dirty WHERE id = 2;
BEGIN;
INSERT INTO dirty VALUES (4, NULL, pad(5) || '01890a5d-ac96-774b-bcce-b302099a8057');
ROLLBACK;
-- The TOAST table vacuumed alone: the dead versions' chunks are gone while
-- the dead versions are still on the table's pages.
SELECT format('VACUUM %s', reltoastrelid::regclass) AS vacuum_toast FROM pg_class WHERE oid = 'dirty'::regclass \gset
:vacuum_toast;
SELECT pg_relation_size(reltoastrelid) > 0 AS out_of_line FROM pg_class WHERE oid = 'dirty'::regclass;
SELECT id FROM dirty
 WHERE ctid = ANY ((SELECT uuid_heap_candidates('dirty'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{2,3}', '{}'))::tid[])
 ORDER BY id;
SELECT "table", "column", path, key FROM uuid_find('01890a5d-ac96-774b-bcce-b302099a8057', ARRAY['heap_test']) ORDER BY 1, 2, 3;
-- Again once the table is vacuumed.
VACUUM dirty;
SELECT id FROM dirty
 WHERE ctid = ANY ((SELECT uuid_heap_candidates('dirty'::regclass, ARRAY['01890a5d-ac96-774b-bcce-b302099a8057']::uuid[], '{2,3}', '{}'))::tid[])
 ORDER BY id;
SELECT "table", "column", path, key FROM uuid_find('01890a5d-ac96-774b-bcce-b302099a8057', ARRAY['heap_test']) ORDER BY 1, 2, 3;
-- A row this statement's snapshot sees is found even when others wrote
-- after it began (a version still visible to it).
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM dirty;
SELECT count(*) FROM uuid_find('01890a5d-ac96-774b-bcce-b302099a8057', ARRAY['heap_test']);
COMMIT;
-- NULL in, no row out.
SELECT count(*) FROM uuid_find(NULL);
SELECT count(*) FROM uuid_find(NULL, ARRAY['heap_test']);
DROP SCHEMA heap_test CASCADE;

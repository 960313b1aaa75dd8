-- Every b-tree index of the schema app checked with amcheck, every heap row
-- looked up in it (heapallindexed): an index whose expression no longer
-- gives what it stored fails here.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT 'b-tree indexes checked: ' || count(bt_index_check(c.oid, true))
FROM pg_class c JOIN pg_am am ON am.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'app' AND c.relkind = 'i' AND am.amname = 'btree';

-- One line per relation of the schema app (tables, partitions, views) and
-- the extension's profile table: rows and an MD5 of all of them as text,
-- in order (tests/upgrade.sh compares these before and after an update).
SET search_path = pg_catalog;
SELECT format('SELECT %L || ''|'' || count(*) || ''|'' || md5(coalesce(string_agg(t::text, E''\n'' ORDER BY t::text), '''')) FROM %s t',
              c.oid::regclass, c.oid::regclass)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE (n.nspname = 'app' AND c.relkind IN ('r', 'v', 'm'))
   OR c.oid = to_regclass('public.uuidforge_profiles')
ORDER BY c.oid::regclass::text
\gexec

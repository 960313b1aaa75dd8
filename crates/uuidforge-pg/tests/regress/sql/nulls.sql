-- Every function of the extension called with NULL for each argument
-- returns NULL (a set-returning one: no row), as the documentation says;
-- none raises an error. Type input and output functions, support
-- functions (internal arguments) and triggers are left out: PostgreSQL
-- never calls them with NULL.
CREATE TEMP TABLE calls AS
SELECT p.oid::regprocedure AS function, p.proretset AS set,
       format('SELECT %s %s(%s)', CASE WHEN p.proretset THEN 'count(*) FROM' ELSE '' END,
              p.oid::regproc,
              string_agg(format('NULL::%s', format_type(a.t, NULL)), ', ' ORDER BY a.n)) AS call
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'uuidforge'
  CROSS JOIN LATERAL unnest(p.proargtypes::oid[]) WITH ORDINALITY a(t, n)
 WHERE p.prokind = 'f' AND p.pronargs > 0
   AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype, 'internal'::regtype, 'cstring'::regtype)
   AND NOT EXISTS (SELECT FROM unnest(p.proargtypes::oid[]) t(o)
                    WHERE o IN ('internal'::regtype, 'cstring'::regtype) OR o = 'anyarray'::regtype)
 GROUP BY p.oid;
SELECT count(*) > 30 AS many FROM calls;
DO $$
DECLARE c record; r text; n bigint;
BEGIN
  FOR c IN SELECT * FROM calls ORDER BY function::text LOOP
    IF c.set THEN
      EXECUTE c.call INTO n;
      IF n <> 0 THEN RAISE NOTICE '% returned % rows for NULL', c.function, n; END IF;
    ELSE
      EXECUTE c.call INTO r;
      IF r IS NOT NULL THEN RAISE NOTICE '% returned % for NULL', c.function, r; END IF;
    END IF;
  END LOOP;
END $$;

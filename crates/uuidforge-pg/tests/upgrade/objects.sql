-- Every object of the extension uuidforge, one line each, by definition:
-- what an upgraded database and a fresh install must have alike
-- (tests/upgrade.sh diffs the two). Names are printed schema-qualified
-- (search_path is pg_catalog alone) and no OID appears.
SET search_path = pg_catalog;
WITH members AS (
  SELECT d.classid, d.objid
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = 'uuidforge'
),
lines AS (
  SELECT 'function ' || p.oid::regprocedure || ' ' || pg_get_functiondef(p.oid)
         || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
         || ' acl ' || coalesce(p.proacl::text, 'default') AS line
  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
  WHERE p.prokind <> 'a'
  UNION ALL
  SELECT 'aggregate ' || p.oid::regprocedure
         || ' returns ' || format_type(p.prorettype, NULL)
         || ' transition ' || a.aggtransfn::regprocedure || ' state ' || format_type(a.aggtranstype, NULL)
         || ' final ' || a.aggfinalfn::text || ' combine ' || a.aggcombinefn::text
         || ' serial ' || a.aggserialfn::text || ' deserial ' || a.aggdeserialfn::text
         || ' initial ' || coalesce(a.agginitval, '-') || ' sort ' || a.aggsortop::regoperator::text
         || ' strict ' || p.proisstrict || ' parallel ' || p.proparallel::text
         || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
  FROM members m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
  JOIN pg_aggregate a ON a.aggfnoid = p.oid
  UNION ALL
  SELECT 'type ' || t.oid::regtype || ' kind ' || t.typtype::text || ' len ' || t.typlen
         || ' byval ' || t.typbyval || ' align ' || t.typalign::text || ' storage ' || t.typstorage::text
         || ' category ' || t.typcategory::text || ' preferred ' || t.typispreferred
         || ' input ' || t.typinput::regproc::text || ' output ' || t.typoutput::regproc::text
         || ' receive ' || t.typreceive::regproc::text || ' send ' || t.typsend::regproc::text
         || ' typmod_in ' || t.typmodin::regproc::text || ' typmod_out ' || t.typmodout::regproc::text
         || ' analyze ' || t.typanalyze::regproc::text
         || ' base ' || CASE WHEN t.typbasetype = 0 THEN '-' ELSE format_type(t.typbasetype, t.typtypmod) END
         || ' not_null ' || t.typnotnull
         || ' default ' || coalesce(pg_get_expr(t.typdefaultbin, 0), t.typdefault, '-')
         || ' checks ' || coalesce((SELECT string_agg(c.conname || ' ' || pg_get_constraintdef(c.oid), '; ' ORDER BY c.conname)
                                    FROM pg_constraint c WHERE c.contypid = t.oid), '-')
         || ' comment ' || coalesce(obj_description(t.oid, 'pg_type'), '-')
         || ' acl ' || coalesce(t.typacl::text, 'default')
  FROM members m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
  UNION ALL
  SELECT 'operator ' || o.oid::regoperator || ' returns ' || format_type(o.oprresult, NULL)
         || ' function ' || o.oprcode::regprocedure
         || ' commutator ' || o.oprcom::regoperator::text || ' negator ' || o.oprnegate::regoperator::text
         || ' restrict ' || o.oprrest::text || ' join ' || o.oprjoin::text
         || ' merges ' || o.oprcanmerge || ' hashes ' || o.oprcanhash
         || ' comment ' || coalesce(obj_description(o.oid, 'pg_operator'), '-')
  FROM members m JOIN pg_operator o ON m.classid = 'pg_operator'::regclass AND o.oid = m.objid
  UNION ALL
  SELECT 'cast ' || format_type(c.castsource, NULL) || ' as ' || format_type(c.casttarget, NULL)
         || ' function ' || CASE WHEN c.castfunc = 0 THEN '-' ELSE c.castfunc::regprocedure::text END
         || ' context ' || c.castcontext::text || ' method ' || c.castmethod::text
  FROM members m JOIN pg_cast c ON m.classid = 'pg_cast'::regclass AND c.oid = m.objid
  UNION ALL
  SELECT 'operator class ' || n.nspname || '.' || c.opcname || ' using ' || am.amname
         || ' for ' || format_type(c.opcintype, NULL) || ' default ' || c.opcdefault
         || ' family ' || fn.nspname || '.' || f.opfname
         || ' storage ' || CASE WHEN c.opckeytype = 0 THEN '-' ELSE format_type(c.opckeytype, NULL) END
  FROM members m JOIN pg_opclass c ON m.classid = 'pg_opclass'::regclass AND c.oid = m.objid
  JOIN pg_namespace n ON n.oid = c.opcnamespace JOIN pg_am am ON am.oid = c.opcmethod
  JOIN pg_opfamily f ON f.oid = c.opcfamily JOIN pg_namespace fn ON fn.oid = f.opfnamespace
  UNION ALL
  SELECT 'operator family ' || n.nspname || '.' || f.opfname || ' using ' || am.amname
         || ' operators ' || coalesce((SELECT string_agg(a.amopstrategy || ':' || a.amopopr::regoperator
                                                         || ':' || a.amoppurpose::text, ', ' ORDER BY a.amopstrategy, a.amopopr::regoperator::text)
                                       FROM pg_amop a WHERE a.amopfamily = f.oid), '-')
         || ' functions ' || coalesce((SELECT string_agg(p.amprocnum || ':' || format_type(p.amproclefttype, NULL) || ','
                                                         || format_type(p.amprocrighttype, NULL) || ':' || p.amproc::regprocedure,
                                                         ', ' ORDER BY p.amprocnum, p.amproclefttype, p.amprocrighttype)
                                       FROM pg_amproc p WHERE p.amprocfamily = f.oid), '-')
  FROM members m JOIN pg_opfamily f ON m.classid = 'pg_opfamily'::regclass AND f.oid = m.objid
  JOIN pg_namespace n ON n.oid = f.opfnamespace JOIN pg_am am ON am.oid = f.opfmethod
  UNION ALL
  SELECT 'table ' || c.oid::regclass || ' columns ' || (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                                                          || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                                                          || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
                                                   FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                                                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
         || ' constraints ' || coalesce((SELECT string_agg(k.conname || ' ' || pg_get_constraintdef(k.oid), '; ' ORDER BY k.conname)
                                         FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype <> 'n'), '-')
         || ' dumped ' || (c.oid = ANY (e.extconfig))::text
         || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '-')
         || ' acl ' || coalesce(c.relacl::text, 'default')
  FROM members m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
  CROSS JOIN pg_extension e WHERE e.extname = 'uuidforge'
  UNION ALL
  SELECT 'event trigger ' || t.evtname || ' on ' || t.evtevent || ' function ' || t.evtfoid::regprocedure
         || ' enabled ' || t.evtenabled::text || ' tags ' || coalesce(array_to_string(t.evttags, ','), '-')
  FROM members m JOIN pg_event_trigger t ON m.classid = 'pg_event_trigger'::regclass AND t.oid = m.objid
  UNION ALL
  -- Anything else the extension owns (views, schemas, ...), by its description.
  SELECT 'other ' || pg_describe_object(m.classid, m.objid, 0)
  FROM members m
  WHERE m.classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_operator'::regclass,
                          'pg_cast'::regclass, 'pg_opclass'::regclass, 'pg_opfamily'::regclass,
                          'pg_event_trigger'::regclass)
    AND NOT (m.classid = 'pg_class'::regclass AND (SELECT relkind FROM pg_class WHERE oid = m.objid) = 'r')
)
SELECT line FROM lines ORDER BY line;

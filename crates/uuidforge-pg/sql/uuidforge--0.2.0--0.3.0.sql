-- uuidforge 0.2.0 -> 0.3.0 (ALTER EXTENSION uuidforge UPDATE TO '0.3.0').
--
-- 0.3.0 runs on PostgreSQL 15 to 18 and answers like PostgreSQL 18 where
-- the names are the same: uuid_extract_timestamp(uuid) and
-- uuid_extract_timestamp(uuid, text) now return NULL for version 6 UUIDs
-- (18 reads the time of versions 1 and 7 only); the version 6 time moves
-- to uuid_extract_timestamp_v6(uuid), added here.
--
-- The 0.3.0 library still answers the old way under the old functions'
-- C symbols, so a database keeps its answers after the library is
-- installed and until this script runs. Here the two functions switch to
-- the new answers, and what stored the old ones is dealt with:
--   * every index whose expression or predicate calls either function is
--     rebuilt (REINDEX INDEX: it blocks writes to its table meanwhile), so
--     no index holds a v6 time the function no longer returns; an INFO
--     message names each (an extension script's NOTICEs are not shown);
--   * stored generated columns, CHECK constraints and materialized views
--     calling either function keep what they hold; a WARNING names each,
--     with the statement that recomputes it. Views simply give the new
--     answers.
-- No type, operator, cast or stored value changes otherwise.
-- tests/upgrade.sh checks the result against a fresh 0.3.0 install,
-- object by object.
\echo Use "ALTER EXTENSION uuidforge UPDATE TO '0.3.0'" to load this file. \quit

CREATE FUNCTION "uuid_extract_timestamp_v6"("id" uuid) RETURNS timestamp with time zone
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_extract_timestamp_v6_wrapper';

CREATE OR REPLACE FUNCTION "uuid_extract_timestamp"("id" uuid) RETURNS timestamp with time zone
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_extract_timestamp_pg18_wrapper';
CREATE OR REPLACE FUNCTION "uuid_extract_timestamp"("id" uuid, "layout" TEXT) RETURNS timestamp with time zone
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_extract_timestamp_layout_pg18_wrapper';

DO $upgrade$
DECLARE
    changed oid[] := ARRAY['@extschema@.uuid_extract_timestamp(uuid)'::regprocedure,
                           '@extschema@.uuid_extract_timestamp(uuid, text)'::regprocedure]::oid[];
    r record;
BEGIN
    FOR r IN
        SELECT DISTINCT d.objid::regclass AS index
        FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_class c ON c.oid = d.objid
        WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.refclassid = 'pg_catalog.pg_proc'::regclass
          AND d.refobjid = ANY (changed) AND c.relkind = 'i'
        ORDER BY 1
    LOOP
        RAISE INFO 'uuidforge 0.3.0: rebuilding index %: it calls uuid_extract_timestamp, which now gives NULL for version 6 UUIDs', r.index;
        EXECUTE pg_catalog.format('REINDEX INDEX %s', r.index);
    END LOOP;
    FOR r IN
        SELECT a.attrelid::regclass AS rel, a.attname AS col
        FROM pg_catalog.pg_depend d
        JOIN pg_catalog.pg_attrdef ad ON d.classid = 'pg_catalog.pg_attrdef'::regclass AND ad.oid = d.objid
        JOIN pg_catalog.pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
        WHERE d.refclassid = 'pg_catalog.pg_proc'::regclass AND d.refobjid = ANY (changed) AND a.attgenerated = 's'
        ORDER BY 1, 2
    LOOP
        RAISE WARNING 'uuidforge 0.3.0: generated column %.% calls uuid_extract_timestamp, which now gives NULL for version 6 UUIDs: rows made from one keep the time stored for it',
            r.rel, pg_catalog.quote_ident(r.col)
            USING HINT = pg_catalog.format('to recompute: UPDATE %s SET %I = DEFAULT', r.rel, r.col);
    END LOOP;
    FOR r IN
        SELECT k.conrelid::regclass AS rel, k.conname, pg_catalog.pg_get_constraintdef(k.oid) AS def
        FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_constraint k
          ON d.classid = 'pg_catalog.pg_constraint'::regclass AND k.oid = d.objid
        WHERE d.refclassid = 'pg_catalog.pg_proc'::regclass AND d.refobjid = ANY (changed) AND k.contype = 'c'
        ORDER BY 1, 2
    LOOP
        RAISE WARNING 'uuidforge 0.3.0: CHECK constraint % on % calls uuid_extract_timestamp, which now gives NULL for version 6 UUIDs',
            pg_catalog.quote_ident(r.conname), r.rel
            USING HINT = pg_catalog.format('to test the rows again: ALTER TABLE %s DROP CONSTRAINT %I, ADD CONSTRAINT %I %s', r.rel, r.conname, r.conname, r.def);
    END LOOP;
    FOR r IN
        SELECT DISTINCT c.oid::regclass AS matview
        FROM pg_catalog.pg_depend d
        JOIN pg_catalog.pg_rewrite w ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND w.oid = d.objid
        JOIN pg_catalog.pg_class c ON c.oid = w.ev_class
        WHERE d.refclassid = 'pg_catalog.pg_proc'::regclass AND d.refobjid = ANY (changed) AND c.relkind = 'm'
        ORDER BY 1
    LOOP
        RAISE WARNING 'uuidforge 0.3.0: materialized view % holds times from uuid_extract_timestamp, which now gives NULL for version 6 UUIDs', r.matview
            USING HINT = pg_catalog.format('to recompute: REFRESH MATERIALIZED VIEW %s', r.matview);
    END LOOP;
END
$upgrade$;

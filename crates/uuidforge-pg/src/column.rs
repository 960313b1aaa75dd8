//! The `uuidv7_gen` column type (C2), like `serial` for UUIDv7: a domain
//! over `uuid`, and an event trigger that gives each new `uuidv7_gen`
//! column without a default of its own the default
//! `uuidv7_next('table'::regclass)`, which generates through the same cell
//! as `uuidv7()` and remembers the value for `uuid_v7_last(table)`. The
//! domain's own default, the extension's `uuidv7()` (schema-qualified:
//! PostgreSQL 18's own `uuidv7()` in `pg_catalog` would otherwise win),
//! covers the rare column the trigger does not see (event triggers
//! disabled).

use pgrx::prelude::*;

extension_sql!(
    r#"
CREATE DOMAIN uuidv7_gen AS uuid DEFAULT @extschema@.uuidv7();
COMMENT ON DOMAIN uuidv7_gen IS 'a uuid column filled with strictly increasing UUIDv7 (like serial); uuid_v7_last(table) reads the session''s last value';

-- It runs for every CREATE/ALTER TABLE of the database: everything in it is
-- schema-qualified and its search_path pinned, so a session's search_path
-- can neither break other DDL nor redirect it.
CREATE FUNCTION uuidv7_gen_set_defaults() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    command record;
    col record;
BEGIN
    FOR command IN
        SELECT DISTINCT objid FROM pg_event_trigger_ddl_commands()
        WHERE classid = 'pg_class'::regclass AND object_type IN ('table', 'table column')
    LOOP
        FOR col IN
            SELECT a.attname
            FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid
            WHERE a.attrelid = command.objid
              AND c.relkind IN ('r', 'p')
              AND a.atttypid = '@extschema@.uuidv7_gen'::regtype
              AND a.attnum > 0 AND NOT a.attisdropped
              AND NOT a.atthasdef
        LOOP
            EXECUTE format(
                'ALTER TABLE %s ALTER COLUMN %I SET DEFAULT @extschema@.uuidv7_next(%L::regclass)',
                command.objid::regclass, col.attname, command.objid::regclass::text);
        END LOOP;
    END LOOP;
END
$$;

CREATE EVENT TRIGGER uuidv7_gen_set_defaults ON ddl_command_end
    WHEN TAG IN ('CREATE TABLE', 'ALTER TABLE', 'CREATE TABLE AS', 'SELECT INTO')
    EXECUTE FUNCTION uuidv7_gen_set_defaults();
"#,
    name = "uuidv7_gen",
    requires = [uuidv7, uuidv7_next],
);

-- uuidforge 0.1.0 -> 0.2.0 (ALTER EXTENSION uuidforge UPDATE TO '0.2.0').
-- What 0.2.0 added: keyed UUIDv7 (uuidv7_from), hiding keys (uuid_hide,
-- uuid_reveal), shard-routed UUIDv8, generator profiles kept in a table,
-- telemetry, finding UUIDs in a database (uuid_find and its helpers), and
-- sort support for uuid192's b-tree class. Nothing of 0.1.0 changes: no
-- type, operator, cast or function is redefined, so no stored value or
-- index is touched. tests/upgrade.sh checks the result against a fresh
-- 0.2.0-and-later install, object by object.
\echo Use "ALTER EXTENSION uuidforge UPDATE TO '0.2.0'" to load this file. \quit

-- uuid192: sorts without going through the SQL-callable comparison.
CREATE FUNCTION "uuid192_sortsupport"("ssup" internal) RETURNS void
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid192_sortsupport_wrapper';
ALTER OPERATOR FAMILY uuid192_ops USING btree
    ADD FUNCTION 2 (uuid192, uuid192) uuid192_sortsupport(internal);

-- Keyed UUIDv7: the same time and key always give the same UUID.
CREATE FUNCTION "uuidv7_from"("at" timestamp with time zone, "stable_key" TEXT, "secret" bytea) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_from_wrapper';
CREATE FUNCTION "uuidv7_from"("at" timestamp with time zone, "key" bigint) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_from_bigint_wrapper';
CREATE FUNCTION "uuidv7_from"("at" timestamp with time zone, "key" bytea) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_from_bytea_wrapper';
CREATE FUNCTION "uuidv7_from"("at" timestamp with time zone, "key" TEXT) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_from_text_wrapper';

-- Hiding a key's time behind a secret, and getting it back.
CREATE FUNCTION "uuid_hide"("id" uuid, "key" bytea) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_hide_wrapper';
CREATE FUNCTION "uuid_reveal"("id" uuid, "key" bytea) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_reveal_wrapper';

-- UUIDv8 carrying the shard (node) that made it.
CREATE FUNCTION "uuidv8_shard"("node" INT) RETURNS uuid
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv8_shard_wrapper';

-- What the generators did (values, overflows, time ahead of the clock).
CREATE FUNCTION "uuidforge_telemetry"() RETURNS TABLE ("metric" TEXT, "profile" TEXT, "value" bigint)
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidforge_telemetry_wrapper';

-- Finding UUIDs in a database.
CREATE FUNCTION "uuid_find"("value" TEXT, "schemas" TEXT[] DEFAULT NULL)
RETURNS TABLE ("schema" TEXT, "table" TEXT, "column" TEXT, "path" TEXT, "role" TEXT, "key" jsonb, "value" uuid)
STABLE SECURITY INVOKER PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_find_wrapper';
CREATE FUNCTION "uuid_heap_candidates"("rel" oid, "needles" uuid[], "text_columns" smallint[], "binary_columns" smallint[])
RETURNS tid[]
STRICT STABLE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_heap_candidates_wrapper';
CREATE FUNCTION "uuid_text_holds_any"("text" TEXT, "needles" anyarray) RETURNS bool
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_text_holds_any_wrapper';

-- Generator profiles registered by name (kept by pg_dump with the data).
CREATE FUNCTION "uuidforge_profile_check"("name" TEXT, "profile" json) RETURNS jsonb
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidforge_profile_check_wrapper';

CREATE TABLE uuidforge_profiles (
    name text PRIMARY KEY,
    config jsonb NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE uuidforge_profiles IS 'generator profiles registered with uuidforge_profile_register(name, json), usable as uuidforge.profile';
SELECT pg_catalog.pg_extension_config_dump('uuidforge_profiles', '');

CREATE FUNCTION uuidforge_profile_register(name text, profile json) RETURNS jsonb
LANGUAGE sql VOLATILE STRICT SET search_path = pg_catalog AS $$
    INSERT INTO @extschema@.uuidforge_profiles AS p (name, config)
    VALUES ($1, @extschema@.uuidforge_profile_check($1, $2))
    ON CONFLICT ON CONSTRAINT uuidforge_profiles_pkey
    DO UPDATE SET config = EXCLUDED.config, registered_at = now()
    RETURNING p.config
$$;
COMMENT ON FUNCTION uuidforge_profile_register(text, json) IS 'validates a generator profile (the fields of uuidforge profile show default) and stores it under name for SET uuidforge.profile';

CREATE FUNCTION uuidforge_profile_drop(name text) RETURNS boolean
LANGUAGE sql VOLATILE STRICT SET search_path = pg_catalog AS $$
    WITH gone AS (DELETE FROM @extschema@.uuidforge_profiles p WHERE p.name = $1 RETURNING 1)
    SELECT count(*) > 0 FROM gone
$$;
COMMENT ON FUNCTION uuidforge_profile_drop(text) IS 'removes a registered profile; true if it existed';

-- uuidforge 0.3.0 -> 0.4.0 (ALTER EXTENSION uuidforge UPDATE TO '0.4.0').
--
-- 0.4.0 adds uuidforge_data_directory_free_bytes(): the free space of the
-- file system holding the data directory, which a key migration's plan
-- compares with what it may need (SQL alone cannot read free disk space);
-- the drop-ins for pg_uuidv7 and pg_idkit in the schemas
-- uuidforge_pg_uuidv7 and uuidforge_pg_idkit; min and max of uuid and
-- uuid192; the casts between uuid and bytea; the base32hex text of a
-- UUID. Nothing of 0.3.0 changes: no
-- type, operator, cast or function is redefined, so no stored value or
-- index is touched. tests/upgrade.sh
-- checks the result against a fresh 0.4.0 install, object by object.
\echo Use "ALTER EXTENSION uuidforge UPDATE TO '0.4.0'" to load this file. \quit

CREATE FUNCTION "uuidforge_data_directory_free_bytes"() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidforge_data_directory_free_bytes_wrapper';

-- Drop-ins for pg_uuidv7 1.6 and pg_idkit's UUIDv7 functions, each in a
-- schema of its own that a database puts on its search_path (src/compat.rs).
CREATE SCHEMA IF NOT EXISTS uuidforge_pg_uuidv7;
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_generate_v7() RETURNS uuid
    VOLATILE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', 'uuid_generate_v7_wrapper';
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_v7_to_timestamptz(uuid) RETURNS timestamptz
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', 'uuid_v7_to_timestamptz_wrapper';
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_v7_to_timestamp(uuid) RETURNS timestamp
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', 'uuid_v7_to_timestamp_wrapper';
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_timestamptz_to_v7(timestamptz, zero bool = false) RETURNS uuid
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', 'uuid_timestamptz_to_v7_wrapper';
CREATE FUNCTION uuidforge_pg_uuidv7.uuid_timestamp_to_v7(timestamp, zero bool = false) RETURNS uuid
    STABLE STRICT PARALLEL SAFE LANGUAGE c
    AS 'MODULE_PATHNAME', 'uuid_timestamp_to_v7_wrapper';
GRANT USAGE ON SCHEMA uuidforge_pg_uuidv7 TO PUBLIC;

CREATE SCHEMA IF NOT EXISTS uuidforge_pg_idkit;
CREATE FUNCTION uuidforge_pg_idkit."idkit_uuidv7_generate"() RETURNS TEXT
STRICT
LANGUAGE c
AS 'MODULE_PATHNAME', 'idkit_uuidv7_generate_wrapper';
CREATE FUNCTION uuidforge_pg_idkit."idkit_uuidv7_generate_text"() RETURNS TEXT
STRICT
LANGUAGE c
AS 'MODULE_PATHNAME', 'idkit_uuidv7_generate_text_wrapper';
CREATE FUNCTION uuidforge_pg_idkit."idkit_uuidv7_generate_uuid"() RETURNS uuid
STRICT
LANGUAGE c
AS 'MODULE_PATHNAME', 'idkit_uuidv7_generate_uuid_wrapper';
CREATE FUNCTION uuidforge_pg_idkit."idkit_uuidv7_extract_timestamptz"("val" TEXT) RETURNS timestamp with time zone
STRICT
LANGUAGE c
AS 'MODULE_PATHNAME', 'idkit_uuidv7_extract_timestamptz_wrapper';
GRANT USAGE ON SCHEMA uuidforge_pg_idkit TO PUBLIC;

-- min and max of uuid and uuid192, and the casts between uuid and bytea
-- (src/minmax.rs).
CREATE FUNCTION "uuid_smaller"("a" uuid, "b" uuid) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_smaller_wrapper';
CREATE FUNCTION "uuid_larger"("a" uuid, "b" uuid) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_larger_wrapper';
CREATE FUNCTION "uuid192_smaller"("a" uuid192, "b" uuid192) RETURNS uuid192
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid192_smaller_wrapper';
CREATE FUNCTION "uuid192_larger"("a" uuid192, "b" uuid192) RETURNS uuid192
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid192_larger_wrapper';
CREATE AGGREGATE min(uuid) (SFUNC = uuid_smaller, STYPE = uuid, COMBINEFUNC = uuid_smaller,
    SORTOP = OPERATOR(pg_catalog.<), PARALLEL = SAFE);
CREATE AGGREGATE max(uuid) (SFUNC = uuid_larger, STYPE = uuid, COMBINEFUNC = uuid_larger,
    SORTOP = OPERATOR(pg_catalog.>), PARALLEL = SAFE);
CREATE AGGREGATE min(uuid192) (SFUNC = uuid192_smaller, STYPE = uuid192, COMBINEFUNC = uuid192_smaller,
    SORTOP = <, PARALLEL = SAFE);
CREATE AGGREGATE max(uuid192) (SFUNC = uuid192_larger, STYPE = uuid192, COMBINEFUNC = uuid192_larger,
    SORTOP = >, PARALLEL = SAFE);
CREATE FUNCTION "uuid_bytea"("id" uuid) RETURNS bytea
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_bytea_wrapper';
CREATE FUNCTION "bytea_uuid"("b" bytea) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'bytea_uuid_wrapper';
CREATE CAST (uuid AS bytea) WITH FUNCTION uuid_bytea(uuid);
CREATE CAST (bytea AS uuid) WITH FUNCTION bytea_uuid(bytea);

-- The base32hex text of a UUID and back (src/extract.rs).
CREATE FUNCTION "uuid_to_base32hex"("id" uuid) RETURNS TEXT
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_to_base32hex_wrapper';
CREATE FUNCTION "uuid_from_base32hex"("text" TEXT) RETURNS uuid
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_from_base32hex_wrapper';

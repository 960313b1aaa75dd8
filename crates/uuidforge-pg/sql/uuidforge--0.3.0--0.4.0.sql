-- uuidforge 0.3.0 -> 0.4.0 (ALTER EXTENSION uuidforge UPDATE TO '0.4.0').
--
-- 0.4.0 adds uuidforge_data_directory_free_bytes(): the free space of the
-- file system holding the data directory, which a key migration's plan
-- compares with what it may need (SQL alone cannot read free disk space).
-- Nothing of 0.3.0 changes: no type, operator, cast or function is
-- redefined, so no stored value or index is touched. tests/upgrade.sh
-- checks the result against a fresh 0.4.0 install, object by object.
\echo Use "ALTER EXTENSION uuidforge UPDATE TO '0.4.0'" to load this file. \quit

CREATE FUNCTION "uuidforge_data_directory_free_bytes"() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'uuidforge_data_directory_free_bytes_wrapper';

-- Removes the uuidforge functions (before removing the package).
DROP FUNCTION IF EXISTS uuidv7;
DROP FUNCTION IF EXISTS uuidv7_bin;
DROP FUNCTION IF EXISTS uuidv7_at;
DROP FUNCTION IF EXISTS uuidv7_from;
DROP FUNCTION IF EXISTS uuid_v7_timestamp;
DROP FUNCTION IF EXISTS uuidv7_lower;
DROP FUNCTION IF EXISTS uuidv7_upper;
DROP FUNCTION IF EXISTS uuid_to_rfc_bin;
DROP FUNCTION IF EXISTS uuid_to_swapped_bin;
DROP FUNCTION IF EXISTS uuid_from_rfc_bin;
DROP FUNCTION IF EXISTS uuid_from_swapped_bin;

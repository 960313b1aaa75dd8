-- Shared helper: runs a statement and reports its SQLSTATE, message and
-- detail, so the expected output pins all three.
-- (with_detail false for details that quote random values).
CREATE FUNCTION error_of(statement text, with_detail boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || SQLERRM
        || CASE WHEN with_detail THEN coalesce(' | ' || nullif(detail, ''), '') ELSE '' END;
END
$$;
SELECT extname, extversion FROM pg_extension WHERE extname = 'uuidforge';

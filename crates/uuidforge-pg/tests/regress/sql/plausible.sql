-- Plausibility checks for client-supplied UUIDv7 (E9).
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
SELECT uuidv7_is_plausible(uuidv7(), '5 seconds') AS fresh,
       uuidv7_is_plausible(uuidv7('1 hour'), '5 seconds') AS future,
       uuidv7_is_plausible(uuidv7('1 hour'), '2 hours') AS future_within_skew,
       uuidv7_is_plausible(uuidv4(), '5 seconds') AS v4,
       uuidv7_is_plausible('017F22E2-79B0-7CC3-18C4-DC0C0C07398F', '5 seconds') AS ncs_variant,
       uuidv7_is_plausible(uuidv7_at('2001-01-01'), '5 seconds', '2020-01-01') AS too_old,
       uuidv7_is_plausible(uuidv7_at('2021-01-01'), '5 seconds', '2020-01-01') AS after_cutoff;
SELECT uuidv7_implausibility(uuidv7(), '5 seconds') AS fresh_reason,
       uuidv7_implausibility(uuidv4(), '5 seconds') AS v4_reason,
       uuidv7_implausibility('017F22E2-79B0-7CC3-18C4-DC0C0C07398F', '1 s') AS ncs_reason,
       uuidv7_implausibility(uuidv7('1 hour'), '5 seconds') LIKE 'timestamp % is %ms in the future, more than the allowed skew of 5000 ms' AS future_reason;
SELECT error_of($$SELECT uuidv7_is_plausible(uuidv7(), '-1 second')$$);
SELECT uuidv7_is_plausible(NULL, '1 s') IS NULL AS null_id;

-- As a CHECK constraint.
CREATE TEMP TABLE ingest (id uuid PRIMARY KEY CHECK (uuidv7_is_plausible(id, '5 seconds')));
INSERT INTO ingest VALUES (uuidv7());
SELECT error_of($$INSERT INTO ingest VALUES (uuidv7('1 day'))$$, false);
SELECT error_of($$INSERT INTO ingest VALUES (uuidv4())$$, false);
SELECT count(*) FROM ingest;

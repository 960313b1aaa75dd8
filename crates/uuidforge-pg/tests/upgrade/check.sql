-- After ALTER EXTENSION uuidforge UPDATE: what a database made on an
-- earlier release must still do (tests/upgrade.sh; every failure is an
-- error).
SET client_min_messages = warning;
DO $$
DECLARE
    new_id uuid;
    below boolean;
BEGIN
    -- The domain's default and the generators go on, above every stored key.
    INSERT INTO app.events (note) VALUES ('after the update') RETURNING id INTO new_id;
    SELECT bool_and(e.id < new_id) INTO below FROM app.events e WHERE e.id <> new_id;
    ASSERT below, 'a new key is not above the stored ones';
    ASSERT uuid_v7_last('app.events') = new_id, 'uuid_v7_last does not give the new key';
    -- PostgreSQL 18's answers under its names; the v6 time under its own.
    ASSERT (SELECT bool_and(uuid_extract_timestamp(v6) IS NULL) FROM app.events), 'uuid_extract_timestamp(v6) is not NULL';
    -- (v6_at holds a v6 time where a release before 0.3.0 stored it.)
    ASSERT (SELECT bool_and(uuid_extract_timestamp_v6(v6) IS NOT NULL
                            AND (v6_at IS NULL OR uuid_extract_timestamp_v6(v6) = v6_at)) FROM app.events),
        'uuid_extract_timestamp_v6 does not give the time the old release stored';
    ASSERT (SELECT bool_and(at = uuid_extract_timestamp(id)) FROM app.events), 'v7 times changed';
END $$;
-- uuid192 through each index: hash alone, then b-tree (with sort support).
BEGIN;
DROP INDEX app.ledger_raw_btree;
SET LOCAL enable_seqscan = off;
DO $$ BEGIN
    ASSERT (SELECT count(*) FROM app.ledger l WHERE EXISTS (SELECT 1 FROM app.ledger m WHERE m.raw = l.raw)) = 300,
        'a uuid192 value is not found through the hash index';
END $$;
ROLLBACK;
INSERT INTO app.ledger (key, raw) SELECT uuid192(uuidv7(), g, 1, 1, 'update', 1, 1), uuid192(uuidv7(), g) FROM generate_series(1, 50) g;
DO $$ BEGIN
    ASSERT (SELECT array_agg(key ORDER BY key) = array_agg(key ORDER BY key::text) FROM app.ledger), 'uuid192 sorts unlike its text';
    ASSERT (SELECT count(*) FROM app.ledger WHERE key >= (SELECT min(key::text)::uuid192 FROM app.ledger)) = 350, 'b-tree range scan';
END $$;
-- Partitions by key range.
INSERT INTO app.readings (taken, value) VALUES (now(), 0);
DO $$ BEGIN
    ASSERT (SELECT count(*) FROM app.readings_2024) > 0 AND (SELECT count(*) FROM app.readings_2025) > 0, 'partition bounds';
    ASSERT (SELECT bool_and(uuid_extract_timestamp(id) = date_trunc('milliseconds', taken)) FROM app.readings_2024), 'uuidv7_at times';
END $$;
-- What 0.2.0 added, on data made before the update or just after it.
DO $$ BEGIN
    ASSERT (SELECT bool_and(reveals) FROM app.order_view), 'uuid_reveal does not undo uuid_hide';
    ASSERT (SELECT bool_and(by_text = uuidv7_from('2024-05-06 07:08:09+00', 'orders:' || order_no)) FROM app.orders), 'uuidv7_from changed';
    ASSERT (SELECT count(*) FROM uuid_find((SELECT id::text FROM app.orders ORDER BY order_no LIMIT 1), ARRAY['app'])) >= 1, 'uuid_find';
END $$;
SET uuidforge.profile = 'wide_counter';
DO $$ BEGIN
    ASSERT uuid_extract_version(uuidv7()) = 7, 'the registered profile does not generate';
END $$;
RESET uuidforge.profile;

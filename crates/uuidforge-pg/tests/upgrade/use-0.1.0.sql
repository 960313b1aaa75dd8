-- Tables that use every type, domain, operator class, default and function
-- uuidforge 0.1.0 offers, with data: what a database made on 0.1.0 holds
-- when it meets a newer release (tests/upgrade.sh).
SET client_min_messages = warning;
CREATE SCHEMA app;

-- Keys: the uuidv7_gen domain (default filled by the event trigger), every
-- generator as a column default, values derived from the key in stored
-- generated columns and constraints.
CREATE TABLE app.events (
    id uuidv7_gen PRIMARY KEY,
    v7 uuid NOT NULL DEFAULT uuidv7(),
    v7_shifted uuid NOT NULL DEFAULT uuidv7(interval '-1 hour'),
    v7_at uuid NOT NULL DEFAULT uuidv7_at('2024-05-06 07:08:09.123+00'),
    v6 uuid NOT NULL DEFAULT uuidv6(),
    v4 uuid NOT NULL DEFAULT uuidv4(),
    at timestamptz GENERATED ALWAYS AS (uuid_extract_timestamp(id)) STORED,
    v6_at timestamptz GENERATED ALWAYS AS (uuid_extract_timestamp(v6)) STORED,
    month_key bigint GENERATED ALWAYS AS (uuidv7_partition_key(id, 20)) STORED,
    base32 text GENERATED ALWAYS AS (uuid_to_base32(id)) STORED,
    note text,
    CHECK (uuid_extract_version(v7) = 7),
    CHECK (uuidv7_is_plausible(v7, interval '1 day', timestamptz '2020-01-01')),
    CONSTRAINT events_v6_recent CHECK (uuid_extract_timestamp(v6) > timestamptz '2020-01-01')
);
CREATE INDEX events_at ON app.events ((uuid_extract_timestamp(v7)));
-- Times of v6 keys: what 0.3.0's uuid_extract_timestamp no longer reads
-- (the update rebuilds this index and warns about v6_at).
CREATE INDEX events_v6_time ON app.events ((uuid_extract_timestamp(v6)));
CREATE INDEX events_fraction ON app.events ((uuid_extract_timestamp(v7, 'counter18')));
INSERT INTO app.events (note) SELECT 'event ' || g FROM generate_series(1, 500) g;
INSERT INTO app.events (id, note)
SELECT uuidv7_next('app.events'), 'next ' || g FROM generate_series(1, 100) g;
CREATE TABLE app.last_seen AS SELECT uuid_v7_last('app.events') AS last_id;
CREATE MATERIALIZED VIEW app.event_times AS
SELECT id, uuid_extract_timestamp(v6) AS v6_time FROM app.events;

-- Partitions by key range, bounds from uuidv7_boundary.
CREATE TABLE app.readings (
    id uuid NOT NULL DEFAULT uuidv7(),
    taken timestamptz NOT NULL,
    value double precision,
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);
CREATE TABLE app.readings_2024 PARTITION OF app.readings
    FOR VALUES FROM (uuidv7_boundary('2024-01-01+00', false)) TO (uuidv7_boundary('2025-01-01+00', false));
CREATE TABLE app.readings_2025 PARTITION OF app.readings
    FOR VALUES FROM (uuidv7_boundary('2025-01-01+00', false)) TO (uuidv7_boundary('2026-01-01+00', false));
CREATE TABLE app.readings_rest PARTITION OF app.readings DEFAULT;
INSERT INTO app.readings (id, taken, value)
SELECT uuidv7_at(t), t, g FROM generate_series(1, 400) g,
       LATERAL (SELECT timestamptz '2024-03-01+00' + g * interval '1 day 3 hours 7 minutes' AS t) s;
INSERT INTO app.readings (taken, value) SELECT now(), g FROM generate_series(1, 50) g;

-- uuid192: b-tree (uuid192_ops) and hash (uuid192_hash_ops) indexes,
-- both constructors, base32 both ways, the cast to uuid.
CREATE TABLE app.ledger (
    key uuid192 PRIMARY KEY,
    raw uuid192 NOT NULL,
    from_text uuid192,
    parent uuid GENERATED ALWAYS AS (key::uuid) STORED,
    archived boolean GENERATED ALWAYS AS (uuid192_archived(key)) STORED
);
CREATE INDEX ledger_raw_hash ON app.ledger USING hash (raw);
CREATE INDEX ledger_raw_btree ON app.ledger (raw uuid192_ops);
INSERT INTO app.ledger (key, raw, from_text)
SELECT k, uuid192(uuidv7(), g * 1000003), uuid192_from_base32(uuid192_to_base32(k))
FROM generate_series(1, 300) g,
     LATERAL (SELECT uuid192(uuidv7(), g % 256, g % 4096, g % 64,
                             (ARRAY['insert', 'update', 'delete', 'restore'])[1 + g % 4],
                             g % 64, g % 128, g % 3 = 0, g % 5 = 0) AS k) s;

-- A view over the functions that read keys.
CREATE VIEW app.event_view AS
SELECT e.id, uuid_extract_timestamp(e.id) AS at, uuid_extract_version(e.v4) AS v4_version,
       uuid_from_base32(e.base32) = e.id AS base32_round_trip,
       uuidv7_implausibility(e.v7, interval '1 day', timestamptz '2020-01-01') AS implausibility,
       e.id >= uuidv7_range_lower(tstzrange(e.at - interval '1 ms', e.at + interval '1 ms'))
         AND e.id <= uuidv7_range_upper(tstzrange(e.at - interval '1 ms', e.at + interval '1 ms')) AS in_range
FROM app.events e;
CREATE VIEW app.ledger_view AS
SELECT l.key, uuid192_fields(l.key) AS fields, uuid192_structure(l.key) AS structure,
       uuid192_module(l.key) AS module, uuid192_hub(l.key) AS hub, uuid192_source(l.key) AS source,
       uuid192_operation(l.key) AS operation, uuid192_message(l.key) AS message,
       uuid192_shard(l.key) AS shard, uuid192_deleted(l.key) AS deleted,
       uuid192_payload(l.raw) AS payload, uuid192_segment(l.key) AS segment,
       uuid192_checksum(l.key) AS checksum, uuid192_segment_of_text(l.key::text) AS text_segment,
       uuid192_hash(l.key) AS hash, uuid192_hash_extended(l.key, 7) AS hash7,
       uuid192_cmp(l.key, l.raw) AS cmp
FROM app.ledger l;

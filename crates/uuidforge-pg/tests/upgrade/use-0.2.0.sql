-- What uuidforge 0.2.0 added, in use: keyed keys, hidden keys, shard-routed
-- UUIDv8, a registered generator profile (tests/upgrade.sh; runs after
-- use-0.1.0.sql on a 0.2.0 install).
SET client_min_messages = warning;
CREATE TABLE app.orders (
    id uuid PRIMARY KEY,
    order_no bigint NOT NULL UNIQUE,
    by_text uuid GENERATED ALWAYS AS (uuidv7_from('2024-05-06 07:08:09+00', 'orders:' || order_no)) STORED,
    by_bytes uuid GENERATED ALWAYS AS (uuidv7_from('2024-05-06 07:08:09+00', int8send(order_no))) STORED,
    by_secret uuid GENERATED ALWAYS AS (uuidv7_from('2024-05-06 07:08:09+00', 'orders:' || order_no, decode(repeat('ab', 32), 'hex'))) STORED,
    public_id uuid,
    shard_id uuid
);
SET uuidforge.shard_layout = '{"node_bits": 10, "counter_bits": 14}';
INSERT INTO app.orders (id, order_no, shard_id)
SELECT uuidv7_from(timestamptz '2024-05-06 07:08:09+00' + g * interval '1 minute', g::bigint), g, uuidv8_shard(g % 1024)
FROM generate_series(1, 300) g;
UPDATE app.orders SET public_id = uuid_hide(id, decode(repeat('5a', 32), 'hex'));
RESET uuidforge.shard_layout;
SELECT uuidforge_profile_register('wide_counter', '{"counter_bits": 30, "guard_bits": 2}') IS NOT NULL AS registered;
CREATE VIEW app.order_view AS
SELECT o.id, uuid_reveal(o.public_id, decode(repeat('5a', 32), 'hex')) = o.id AS reveals
FROM app.orders o;

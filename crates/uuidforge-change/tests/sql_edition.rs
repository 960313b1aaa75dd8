//! The SQL edition (`uuidforge db install-sql`) against the extension on
//! the real server: every function of the edition and the extension's of
//! the same name and signature, on the same random and edge inputs (over
//! 10 000 in all, the same every run), answers compared exactly and errors
//! by SQLSTATE. The test command runs it on PostgreSQL 15 and on 18.

#[path = "../../uuidforge-db/tests/common/mod.rs"]
mod common;

use common::TestDb;
use uuidforge_change::ops::install_sql::{edition_sql, EDITION_VERSION};

/// Ranges of the times: empty, unbounded on either side, and bounded with
/// every inclusivity (`r0`), for both range functions.
const RANGES: &str = "SELECT CASE WHEN random() < 0.05 THEN 'empty'::tstzrange
                             WHEN random() < 0.1 THEN tstzrange(NULL, b, '[)')
                             WHEN random() < 0.15 THEN tstzrange(a, NULL, '(]')
                             ELSE tstzrange(least(a, b), greatest(a, b), (ARRAY['[)', '(]', '[]', '()'])[1 + (random() * 3)::int]) END AS r0
                 FROM (SELECT x.t AS a, y.t AS b FROM (SELECT t, row_number() OVER () AS i FROM (TIMES) q) x
                       JOIN (SELECT t, row_number() OVER (ORDER BY random()) AS i FROM (TIMES) q) y USING (i)) p";

/// One function compared: its wrapper's parameters, the call (the same
/// text in both schemas), what the wrapper returns of the value (`r`), and
/// the inputs (a query with the parameters' names as columns).
struct Compared {
    name: &'static str,
    /// The schemas of the function: the extension's, the edition's.
    schemas: [&'static str; 2],
    params: &'static str,
    call: &'static str,
    result: &'static str,
    inputs: &'static str,
}

/// The functions of the extension (in schema `ext`) and of the edition
/// (`ed`).
const MAIN: [&str; 2] = ["ext", "ed"];
/// The drop-ins for pg_uuidv7: the extension's schema of them, and the
/// edition's beside `ed`.
const PG_UUIDV7: [&str; 2] = ["uuidforge_pg_uuidv7", "ed_sql_pg_uuidv7"];
/// The drop-ins for pg_idkit.
const PG_IDKIT: [&str; 2] = ["uuidforge_pg_idkit", "ed_sql_pg_idkit"];

/// Times: spread over the UUIDv7 range and beyond it on both sides, near
/// now, and the edges of the range and of timestamptz.
const TIMES: &str = "SELECT t FROM (
    SELECT timestamptz 'epoch' + ((random() * 1.25 - 0.125) * 281474976710655)::int8 * interval '1 ms'
                               + (random() * 999)::int * interval '1 us' AS t FROM generate_series(1, 1500)
    UNION ALL SELECT now() + (random() - 0.5) * interval '4 years' FROM generate_series(1, 400)
    UNION ALL SELECT unnest(ARRAY['-infinity', 'infinity', '1970-01-01 00:00:00+00', '1969-12-31 23:59:59.999999+00',
        '1970-01-01 00:00:00.000999+00', '1970-01-01 00:00:00.001+00', '10889-08-02 05:31:50.655+00',
        '10889-08-02 05:31:50.655999+00', '10889-08-02 05:31:50.656+00', '4713-01-01 00:00:00+00 BC',
        '294276-12-31 23:59:59.999999+00', '2022-02-22 19:22:22+00', '1582-10-15 00:00:00+00']::timestamptz[])) t";

/// UUIDs: random 128 bits (every version and variant), UUIDv7 near now
/// (the plausibility checks' branches), and the edges.
const UUIDS: &str = "SELECT u FROM (
    SELECT md5(random()::text)::uuid AS u FROM generate_series(1, 1200)
    UNION ALL SELECT ext.uuidv7_at(now() + (random() - 0.8) * interval '2 days') FROM generate_series(1, 600)
    UNION ALL SELECT (substr(h, 1, 12) || '1' || substr(h, 14, 3) || '9' || substr(h, 18))::uuid
                FROM (SELECT md5(random()::text) AS h FROM generate_series(1, 200)) v1
    UNION ALL SELECT unnest(ARRAY['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
        '017f22e2-79b0-7cc3-98c4-dc0c0c07398f', '017f22e2-79b0-7cc3-18c4-dc0c0c07398f',
        '017f22e2-79b0-7cc3-c8c4-dc0c0c07398f', '017f22e2-79b0-7cc3-e8c4-dc0c0c07398f',
        'c232ab00-9414-11ec-b3c8-9f6bdeced846', 'ffffffff-ffff-7fff-bfff-ffffffffffff']::uuid[])) u";

const COMPARED: &[Compared] = &[
    Compared {
        name: "from_text",
        schemas: MAIN,
        params: "at timestamptz, k text",
        call: "uuidv7_from(at, k)",
        result: "r::text",
        inputs: "SELECT t AS at, k FROM (SELECT t, row_number() OVER () AS i FROM (TIMES) x) a
                 JOIN (SELECT row_number() OVER () AS i, k FROM (SELECT md5(random()::text) AS k FROM generate_series(1, 1700)
                       UNION ALL SELECT unnest(ARRAY['', 'orders:42', 'ключ', '键 🔑', repeat('x', 300)])) y) b USING (i)",
    },
    Compared {
        name: "from_bytea",
        schemas: MAIN,
        params: "at timestamptz, k bytea",
        call: "uuidv7_from(at, k)",
        result: "r::text",
        inputs: "SELECT t AS at, decode(md5(t::text), 'hex') AS k FROM (TIMES) x",
    },
    Compared {
        name: "from_bigint",
        schemas: MAIN,
        params: "at timestamptz, k bigint",
        call: "uuidv7_from(at, k)",
        result: "r::text",
        inputs: "SELECT t AS at, k FROM (SELECT t, row_number() OVER () AS i FROM (TIMES) x) a
                 JOIN (SELECT row_number() OVER () AS i, k FROM (SELECT ((random() - 0.5) * 2^63 * 1.999)::int8 AS k FROM generate_series(1, 1700)
                       UNION ALL SELECT unnest(ARRAY[0, 1, -1, 9223372036854775807, -9223372036854775808, 4503599627370495, 4503599627370496]::int8[])) y) b USING (i)",
    },
    Compared {
        name: "from_secret",
        schemas: MAIN,
        params: "at timestamptz, k text, s bytea",
        call: "uuidv7_from(at, k, s)",
        result: "r::text",
        inputs: "SELECT t AS at, md5(t::text) AS k,
                        CASE WHEN random() < 0.1 THEN decode(repeat('ab', (random() * 15)::int), 'hex')
                             WHEN random() < 0.2 THEN decode(repeat(md5(t::text), 5), 'hex')
                             ELSE decode(md5(random()::text) || md5(random()::text), 'hex') END AS s
                 FROM (TIMES) x",
    },
    Compared {
        name: "boundary",
        schemas: MAIN,
        params: "at timestamptz, up boolean",
        call: "uuidv7_boundary(at, up)",
        result: "r::text",
        inputs: "SELECT t AS at, random() < 0.5 AS up FROM (TIMES) x",
    },
    Compared {
        name: "range_lower",
        schemas: MAIN,
        params: "r0 tstzrange",
        call: "uuidv7_range_lower(r0)",
        result: "r::text",
        inputs: RANGES,
    },
    Compared {
        name: "range_upper",
        schemas: MAIN,
        params: "r0 tstzrange",
        call: "uuidv7_range_upper(r0)",
        result: "r::text",
        inputs: RANGES,
    },
    Compared {
        name: "partition_key",
        schemas: MAIN,
        params: "id uuid, bits integer",
        call: "uuidv7_partition_key(id, bits)",
        result: "r::text",
        inputs: "SELECT u AS id, (random() * 52)::int - 2 AS bits FROM (UUIDS) x",
    },
    Compared {
        name: "partition_key_at",
        schemas: MAIN,
        params: "at timestamptz, bits integer",
        call: "uuidv7_partition_key(at, bits)",
        result: "r::text",
        inputs: "SELECT t AS at, (random() * 52)::int - 2 AS bits FROM (TIMES) x",
    },
    Compared {
        name: "implausibility",
        schemas: MAIN,
        params: "id uuid, skew interval, nb timestamptz",
        call: "uuidv7_implausibility(id, skew, nb)",
        // How far ahead is read from the clock at each call (the library's
        // tests check the number).
        result: "regexp_replace(r::text, ' is [0-9]+ ms in the future', ' is N ms in the future')",
        inputs: "SELECT u AS id,
                        CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.05 THEN interval '-1 second'
                             ELSE (random() * 100000)::int * interval '1 second' END AS skew,
                        CASE WHEN random() < 0.3 THEN NULL WHEN random() < 0.05 THEN '-infinity'
                             WHEN random() < 0.05 THEN 'infinity' ELSE now() - random() * interval '3 days' END AS nb
                 FROM (UUIDS) x",
    },
    Compared {
        name: "is_plausible",
        schemas: MAIN,
        params: "id uuid, skew interval, nb timestamptz",
        call: "uuidv7_is_plausible(id, skew, nb)",
        result: "r::text",
        inputs: "SELECT u AS id,
                        CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.05 THEN interval '-1 second'
                             ELSE (random() * 100000)::int * interval '1 second' END AS skew,
                        CASE WHEN random() < 0.3 THEN NULL ELSE now() - random() * interval '3 days' END AS nb
                 FROM (UUIDS) x",
    },
    Compared {
        name: "at",
        schemas: MAIN,
        params: "at timestamptz",
        call: "uuidv7_at(at)",
        // Made anew each call: its millisecond, version and variant.
        result: "left(r::text, 13) || substr(r::text, 15, 1) || (substr(r::text, 20, 1) IN ('8', '9', 'a', 'b'))::text",
        inputs: "SELECT t AS at FROM (TIMES) x",
    },
    Compared {
        name: "shifted",
        schemas: MAIN,
        params: "shift interval",
        call: "uuidv7(shift)",
        // The clock moves between the two calls: the time within 5 s.
        result: "CASE WHEN abs(('x' || left(replace(r::text, '-', ''), 12))::bit(48)::int8
                               - extract(epoch FROM clock_timestamp() + shift) * 1000) < 5000
                      AND substr(r::text, 15, 1) = '7' THEN 'v7 at the shifted time' ELSE r::text END",
        inputs: "SELECT s AS shift FROM (
                   SELECT (random() - 0.5) * interval '200 years' AS s FROM generate_series(1, 500)
                   UNION ALL SELECT (random() - 0.5) * 2 * interval '9000 years' FROM generate_series(1, 300)
                   UNION ALL SELECT unnest(ARRAY['0', '-56 years', '-57 years', '8800 years', '8900 years',
                       '1 mon', '-1 mon 3 days', '100000 years', '-100000 years']::interval[])) x",
    },
    Compared {
        name: "uuid_bytea",
        schemas: MAIN,
        params: "id uuid",
        call: "uuid_bytea(id)",
        result: "r::text",
        inputs: "SELECT u AS id FROM (UUIDS) x",
    },
    Compared {
        name: "bytea_uuid",
        schemas: MAIN,
        params: "bytes bytea",
        call: "bytea_uuid(bytes)",
        result: "r::text",
        inputs: "SELECT CASE WHEN random() < 0.1 THEN substring(uuid_send(u) FROM 1 FOR (random() * 15)::int)
                             WHEN random() < 0.1 THEN uuid_send(u) || '\\x00'::bytea
                             ELSE uuid_send(u) END AS bytes
                 FROM (UUIDS) x",
    },
    Compared {
        name: "to_base32hex",
        schemas: MAIN,
        params: "id uuid",
        call: "uuid_to_base32hex(id)",
        result: "r::text",
        inputs: "SELECT u AS id FROM (UUIDS) x",
    },
    Compared {
        name: "from_base32hex",
        schemas: MAIN,
        params: "txt text",
        call: "uuid_from_base32hex(txt)",
        result: "r::text",
        // Every form PostgreSQL 19's decode reads, and texts it does not.
        inputs: "SELECT CASE (row_number() OVER ()) % 9 WHEN 0 THEN b WHEN 1 THEN lower(b) WHEN 2 THEN b || '======'
                             WHEN 3 THEN ' ' || left(b, 10) || E'\\n' || substr(b, 11) || E'\\t'
                             WHEN 4 THEN left(b, 25) WHEN 5 THEN b || '='
                             WHEN 6 THEN left(b, 25) || substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', 1 + (random() * 35)::int, 1)
                             WHEN 7 THEN left(b, 12) || '=' || substr(b, 13) ELSE b || '0' END AS txt
                 FROM (SELECT ext.uuid_to_base32hex(u) AS b FROM (UUIDS) x) y",
    },
    Compared {
        name: "pg_uuidv7_to_timestamptz",
        schemas: PG_UUIDV7,
        params: "id uuid",
        call: "uuid_v7_to_timestamptz(id)",
        result: "r::text",
        inputs: "SELECT u AS id FROM (UUIDS) x",
    },
    Compared {
        name: "pg_uuidv7_to_timestamp",
        schemas: PG_UUIDV7,
        params: "id uuid",
        call: "uuid_v7_to_timestamp(id)",
        result: "r::text",
        inputs: "SELECT u AS id FROM (UUIDS) x",
    },
    Compared {
        name: "pg_uuidv7_timestamptz_zero",
        schemas: PG_UUIDV7,
        params: "at timestamptz",
        call: "uuid_timestamptz_to_v7(at, true)",
        result: "r::text",
        inputs: "SELECT t AS at FROM (TIMES) x",
    },
    Compared {
        name: "pg_uuidv7_timestamptz",
        schemas: PG_UUIDV7,
        params: "at timestamptz",
        call: "uuid_timestamptz_to_v7(at)",
        // Made anew each call: its millisecond, version and variant.
        result: "left(r::text, 13) || substr(r::text, 15, 1) || (substr(r::text, 20, 1) IN ('8', '9', 'a', 'b'))::text",
        inputs: "SELECT t AS at FROM (TIMES) x",
    },
    Compared {
        name: "pg_uuidv7_timestamp_zero",
        schemas: PG_UUIDV7,
        params: "at timestamp",
        call: "uuid_timestamp_to_v7(at, true)",
        result: "r::text",
        inputs: "SELECT t::timestamp AS at FROM (TIMES) x",
    },
    Compared {
        name: "pg_idkit_extract",
        schemas: PG_IDKIT,
        params: "v text",
        call: "idkit_uuidv7_extract_timestamptz(v)",
        result: "r::text",
        // Every text form pg_idkit reads, and some it does not.
        inputs: "SELECT CASE (row_number() OVER ()) % 7 WHEN 0 THEN u::text WHEN 1 THEN upper(u::text)
                             WHEN 2 THEN '{' || u::text || '}' WHEN 3 THEN 'urn:uuid:' || u::text
                             WHEN 4 THEN replace(u::text, '-', '') WHEN 5 THEN ' ' || u::text
                             ELSE left(u::text, 35) END AS v
                 FROM (UUIDS) x",
    },
];

/// The extraction functions the edition makes before PostgreSQL 18.
const EXTRACTION: &[Compared] = &[
    Compared {
        name: "extract_timestamp",
        schemas: MAIN,
        params: "id uuid",
        call: "uuid_extract_timestamp(id)",
        result: "r::text",
        inputs: "SELECT u AS id FROM (UUIDS) x",
    },
    Compared {
        name: "extract_version",
        schemas: MAIN,
        params: "id uuid",
        call: "uuid_extract_version(id)",
        result: "r::text",
        inputs: "SELECT u AS id FROM (UUIDS) x",
    },
];

/// The wrapper of `c`: the function in schema `s` (`ext` or `ed`), its
/// result as `c.result` says, or `ERROR <SQLSTATE>`.
fn wrapper(c: &Compared) -> String {
    format!(
        "CREATE FUNCTION d_{name}(which text, {params}) RETURNS text LANGUAGE plpgsql AS $$
         DECLARE r text;
         BEGIN
           IF which = 'ext' THEN r := {ext}.{call}; ELSE r := {ed}.{call}; END IF;
           RETURN coalesce((SELECT {result}), 'NULL');
         EXCEPTION WHEN OTHERS THEN RETURN 'ERROR ' || SQLSTATE;
         END $$",
        name = c.name,
        ext = c.schemas[0],
        ed = c.schemas[1],
        params = c.params,
        call = c.call,
        result = c.result.replace("r::text", "r"),
    )
}

fn inputs(c: &Compared) -> String {
    c.inputs
        .replace("(TIMES)", &format!("({TIMES})"))
        .replace("(UUIDS)", &format!("({UUIDS})"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sql_edition_answers_as_the_extension_does() {
    let db = TestDb::create("sql_edition_diff").await;
    let admin = db.admin().await;
    admin
        .batch_execute("CREATE SCHEMA ext; CREATE EXTENSION uuidforge SCHEMA ext")
        .await
        .unwrap();
    admin.batch_execute(&edition_sql("ed")).await.unwrap();
    let version: String = admin
        .query_one("SELECT ed.uuidforge_sql_version()", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(version, EDITION_VERSION);
    let server: i32 = admin
        .query_one("SELECT current_setting('server_version_num')::int", &[])
        .await
        .unwrap()
        .get(0);
    let mut compared: Vec<&Compared> = COMPARED.iter().collect();
    if server < 180000 {
        compared.extend(EXTRACTION);
    }
    let mut total = 0i64;
    let mut report = Vec::new();
    for c in compared {
        admin.batch_execute(&wrapper(c)).await.unwrap();
        let args: Vec<&str> = c
            .params
            .split(", ")
            .map(|p| p.split(' ').next().unwrap())
            .collect();
        let args = args.join(", ");
        // One seed per function: the same inputs every run.
        admin.batch_execute("SELECT setseed(0.25)").await.unwrap();
        let row = admin
            .query_one(
                &format!(
                    "SELECT count(*), count(*) FILTER (WHERE a IS DISTINCT FROM b),
                            count(*) FILTER (WHERE a LIKE 'ERROR%'),
                            coalesce(array_to_string((array_agg(format('(%s) -> extension %s, SQL edition %s', concat_ws(', ', {args}), a, b))
                                     FILTER (WHERE a IS DISTINCT FROM b))[1:5], E'\\n'), '')
                     FROM (SELECT i.*, d_{name}('ext', {args}) AS a, d_{name}('ed', {args}) AS b
                           FROM ({inputs}) i) t",
                    name = c.name,
                    inputs = inputs(c),
                ),
                &[],
            )
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let (n, differ, errors, examples): (i64, i64, i64, String) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        total += n;
        println!(
            "{}: {n} inputs, {errors} errors on both sides, {differ} differ",
            c.name
        );
        if differ > 0 {
            report.push(format!("{} ({differ} of {n} differ):\n{examples}", c.name));
        }
    }
    // min and max: aggregates, compared over the UUIDs as a whole, by
    // group, and on no rows.
    admin.batch_execute("SELECT setseed(0.25)").await.unwrap();
    let row = admin
        .query_one(
            &format!(
                "WITH v AS (SELECT u, (row_number() OVER ()) % 5 AS g FROM ({UUIDS}) x
                            UNION ALL SELECT NULL, 1)
                 SELECT count(*), count(*) FILTER (WHERE (a_lo, a_hi) IS DISTINCT FROM (b_lo, b_hi))
                 FROM (SELECT g, ext.min(u) AS a_lo, ext.max(u) AS a_hi, ed.min(u) AS b_lo, ed.max(u) AS b_hi FROM v GROUP BY ROLLUP (g)
                       UNION ALL SELECT -1, ext.min(u), ext.max(u), ed.min(u), ed.max(u) FROM v WHERE false) t"
            ),
            &[],
        )
        .await
        .unwrap();
    let (groups, differ): (i64, i64) = (row.get(0), row.get(1));
    println!("min and max: {groups} groups, {differ} differ");
    assert_eq!((groups, differ), (7, 0), "min and max of uuid");
    assert!(report.is_empty(), "{}", report.join("\n\n"));
    assert!(total >= 10_000, "only {total} inputs");
    drop(admin);
    db.drop_now().await;
}

/// `uuidv7()` within a session stays increasing when the clock steps back
/// (the session's last millisecond is set ahead of the clock) and when the
/// counter wraps (its epoch differs from the session's last one).
#[tokio::test(flavor = "multi_thread")]
async fn the_session_order_survives_a_clock_step_back_and_a_counter_wrap() {
    let db = TestDb::create("sql_edition_order").await;
    let admin = db.admin().await;
    admin.batch_execute(&edition_sql("ed")).await.unwrap();
    let ms = |u: &str| i64::from_str_radix(&u.replace('-', "")[..12], 16).unwrap();
    let one = |sql: &'static str| {
        let admin = &admin;
        async move {
            let row = admin.query_one(sql, &[]).await.unwrap();
            row.get::<_, String>(0)
        }
    };
    let first = one("SELECT ed.uuidv7()::text").await;
    // The clock "steps back" by a minute: the session's last millisecond
    // is a minute ahead of it.
    let ahead = ms(&first) + 60_000;
    admin
        .execute(
            "SELECT set_config('uuidforge_sql.uuidv7_last', $1 || ' ' || split_part(current_setting('uuidforge_sql.uuidv7_last'), ' ', 2), false)",
            &[&ahead.to_string()],
        )
        .await
        .unwrap();
    let values: Vec<String> = admin
        .query("SELECT ed.uuidv7()::text FROM generate_series(1, 100)", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(values.iter().all(|v| ms(v) == ahead), "{values:?}");
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    // A counter wrap: the session's last epoch is another one.
    let last = values.last().unwrap().clone();
    admin
        .execute(
            "SELECT set_config('uuidforge_sql.uuidv7_last', $1 || ' 12345', false)",
            &[&ahead.to_string()],
        )
        .await
        .unwrap();
    let after = one("SELECT ed.uuidv7()::text").await;
    assert_eq!(ms(&after), ahead + 1, "{after}");
    assert!(after > last);
    drop(admin);
    db.drop_now().await;
}

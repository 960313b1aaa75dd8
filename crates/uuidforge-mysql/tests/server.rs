//! The uuidforge functions inside the real MariaDB: Debian's server on
//! 127.0.0.1:3307 with the functions from the Debian package
//! (scripts/mariadb-setup.sh, which prints UUIDFORGE_TEST_MARIADB). Eight
//! writers into every storage form, with the tools' report on them, are in
//! crates/uuidforge-cli/tests/cli_mariadb.rs.

use mysql_async::prelude::*;
use mysql_async::{Conn, Opts, Pool, Value};
use uuid::Uuid;
use uuidforge::sortorder::mysql_uuid_to_bin;

fn url() -> String {
    std::env::var("UUIDFORGE_TEST_MARIADB").unwrap_or_else(|_| {
        panic!("UUIDFORGE_TEST_MARIADB is not set: run scripts/mariadb-setup.sh and export the line it prints")
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A pool on a fresh database `uf_<tag>_<pid>`.
async fn fresh(tag: &str) -> Pool {
    let name = format!("uf_{tag}_{}", std::process::id());
    let mut admin = Conn::new(Opts::from_url(&url()).unwrap()).await.unwrap();
    admin
        .query_drop(format!(
            "DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"
        ))
        .await
        .unwrap();
    admin.disconnect().await.unwrap();
    Pool::new(Opts::from_url(&format!("{}/{name}", url())).unwrap())
}

async fn one(conn: &mut Conn, sql: &str) -> Option<String> {
    conn.query_first::<Option<String>, _>(sql)
        .await
        .unwrap()
        .flatten()
}

fn uuid(text: &str) -> Uuid {
    Uuid::parse_str(text).unwrap()
}

fn ms(text: &str) -> u64 {
    chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .unwrap()
        .and_utc()
        .timestamp_millis() as u64
}

#[test]
fn every_function_agrees_with_the_library() {
    runtime().block_on(async {
        let pool = fresh("functions").await;
        let mut c = pool.get_conn().await.unwrap();
        let at = "2022-02-22 19:22:22.123";
        let at_ms = 1_645_557_742_123u64;
        // Keyed: the CLI's `gen --at … --key orders:42`, SQL's, Python's.
        let keyed = one(&mut c, "SELECT uuidv7_from('2022-02-22 19:22:22', 'orders:42')").await.unwrap();
        assert_eq!(keyed, "017f22e2-79b0-7496-923e-225cc233cada");
        assert_eq!(
            uuid(&one(&mut c, &format!("SELECT uuidv7_from(UNIX_TIMESTAMP('{at}'), 42)")).await.unwrap()),
            uuidforge::generator::v7_from_ordered(at_ms, 42, b"").unwrap()
        );
        // Times: UTC text and Unix seconds with decimals, to the millisecond.
        for arg in [format!("'{at}'"), format!("UNIX_TIMESTAMP('{at}')"), format!("'{}'", at.replace(' ', "T"))] {
            let made = uuid(&one(&mut c, &format!("SELECT uuidv7_at({arg})")).await.unwrap());
            assert_eq!((made.get_version_num(), (made.as_u128() >> 80) as u64), (7, at_ms), "{arg}");
            assert_eq!(
                one(&mut c, &format!("SELECT uuidv7_lower({arg})")).await.unwrap(),
                uuidforge::bounds::lowest_v7(at_ms).unwrap().to_string()
            );
            assert_eq!(
                one(&mut c, &format!("SELECT uuidv7_upper({arg})")).await.unwrap(),
                uuidforge::bounds::highest_v7(at_ms).unwrap().to_string()
            );
        }
        // Now, and shifted a day back; the time read back.
        let (now, made, shifted): (String, String, String) = c
            .query_first("SELECT UTC_TIMESTAMP(3), uuid_v7_timestamp(uuidv7()), uuid_v7_timestamp(uuidv7(-86400000))")
            .await
            .unwrap()
            .unwrap();
        assert!(ms(&made).abs_diff(ms(&now)) < 1000, "{made} vs {now}");
        assert!(ms(&shifted).abs_diff(ms(&now) - 86_400_000) < 1000, "{shifted} vs {now}");
        assert_eq!(one(&mut c, "SELECT uuid_v7_timestamp(uuidv7('x'))").await, None);
        assert_eq!(
            one(&mut c, "SELECT uuid_v7_timestamp('017f22e2-79b0-7cc3-98c4-dc0c0c07398f')").await.unwrap(),
            "2022-02-22 19:22:22.000"
        );
        assert_eq!(one(&mut c, "SELECT uuid_v7_timestamp(UUID())").await, None, "a v1 has no v7 time");
        // Every spelling and storage form of 200 UUIDs, both byte orders.
        for i in 0..200u128 {
            // v4 and v7 (MariaDB's UUID type takes RFC variants only).
            let bytes = (i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ 0x0123_4567).to_be_bytes();
            let id = if i % 2 == 0 {
                uuid::Builder::from_random_bytes(bytes).into_uuid()
            } else {
                uuidforge::v7()
            };
            let hex = hex_of(id.as_bytes());
            // MySQL's UUID_TO_BIN(u, 1): time_hi, time_mid, time_low.
            let swapped = hex_of(&mysql_uuid_to_bin(&id, true));
            for spelled in [
                format!("'{id}'"),
                format!("'{}'", id.simple().to_string().to_uppercase()),
                format!("'{}'", id.braced()),
                format!("'{}'", id.urn()),
                format!("CAST('{id}' AS UUID)"),
                format!("X'{hex}'"),
            ] {
                let (rfc, sw, back, back_swapped): (String, String, String, String) = c
                    .query_first(format!(
                        "SELECT hex(uuid_to_rfc_bin({spelled})), hex(uuid_to_swapped_bin({spelled})), \
                         uuid_from_rfc_bin(uuid_to_rfc_bin({spelled})), uuid_from_swapped_bin(X'{swapped}')"
                    ))
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!((rfc, sw), (hex.clone(), swapped.clone()), "{spelled}");
                assert_eq!((uuid(&back), uuid(&back_swapped)), (id, id), "{spelled}");
            }
        }
        // MySQL's documented example of UUID_TO_BIN(u, 1).
        assert_eq!(
            one(&mut c, "SELECT hex(uuid_to_swapped_bin('6ccd780c-baba-1026-9564-5b8c656024db'))").await.unwrap(),
            "1026BABA6CCD780C95645B8C656024DB"
        );
        // A wrong number of arguments is refused when the statement is
        // prepared, naming the signature.
        for (call, signature) in [
            ("uuidv7(1, 2)", "uuidv7() or uuidv7(shift_ms)"),
            ("uuidv7_bin(1)", "uuidv7_bin()"),
            ("uuidv7_at()", "uuidv7_at(at"),
            ("uuidv7_from(1)", "uuidv7_from(at, key)"),
            ("uuid_v7_timestamp()", "uuid_v7_timestamp(uuid)"),
            ("uuid_to_rfc_bin(1, 2)", "uuid_to_rfc_bin(uuid)"),
        ] {
            let e = c.query_drop(format!("SELECT {call}")).await.unwrap_err().to_string();
            assert!(e.contains(signature), "{call}: {e}");
        }
        drop(c);
        pool.disconnect().await.unwrap();
    });
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// Edge values and random bytes, texts and numbers through every function:
/// each gives NULL or a value of its kind, and the server stays up (its
/// uptime goes on, the connection answers).
#[test]
fn arbitrary_arguments_never_take_the_server_down() {
    runtime().block_on(async {
        let pool = fresh("arbitrary").await;
        let mut c = pool.get_conn().await.unwrap();
        let uptime = || "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'";
        let before: u64 = one(&mut c, uptime()).await.unwrap().parse().unwrap();
        let mut values: Vec<String> = [
            "NULL", "''", "' '", "0", "-1", "1.5", "-0.0001", "1e308", "-1e308", "18446744073709551615",
            "-9223372036854775808", "9223372036854775807", "281474976710655", "281474976710656", "'0000-00-00 00:00:00'",
            "'9999-12-31 23:59:59.999999'", "'1969-12-31 23:59:59'", "'10889-08-02'", "X''", "X'00'",
            "REPEAT('a', 70000)", "'{'", "'urn:uuid:'", "CAST(0 AS DECIMAL(65, 30))", "NOW(6)", "CURDATE()",
            "'00000000-0000-0000-0000-000000000000'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "UUID()", "uuidv7_bin()",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..400 {
            let len = (next() % 48) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            values.push(format!("X'{}'", hex_of(&bytes)));
            values.push(format!("{}", next() as i64));
            values.push(format!("'{}'", (0..len).map(|_| (b' ' + (next() % 94) as u8) as char).filter(|c| *c != '\'' && *c != '\\').collect::<String>()));
        }
        let one_argument = [
            "uuidv7", "uuidv7_at", "uuid_v7_timestamp", "uuidv7_lower", "uuidv7_upper", "uuid_to_rfc_bin",
            "uuid_to_swapped_bin", "uuid_from_rfc_bin", "uuid_from_swapped_bin",
        ];
        let mut answered = 0;
        for chunk in values.chunks(50) {
            for f in one_argument {
                let calls: Vec<String> = chunk.iter().map(|v| format!("length({f}({v}))")).collect();
                let row: Vec<Value> = c
                    .query_first::<mysql_async::Row, _>(format!("SELECT {}", calls.join(", ")))
                    .await
                    .unwrap()
                    .unwrap()
                    .unwrap();
                for v in row {
                    match v {
                        Value::NULL => {}
                        Value::Int(n) => assert!([16, 23, 36].contains(&n), "{f}: length {n}"),
                        Value::Bytes(b) => {
                            let n: i64 = String::from_utf8(b).unwrap().parse().unwrap();
                            assert!([16, 23, 36].contains(&n), "{f}: length {n}");
                        }
                        other => panic!("{f}: {other:?}"),
                    }
                    answered += 1;
                }
            }
            let pairs: Vec<String> = chunk.windows(2).map(|w| format!("length(uuidv7_from({}, {}))", w[0], w[1])).collect();
            c.query_drop(format!("SELECT {}", pairs.join(", "))).await.unwrap();
        }
        assert!(answered > 10_000, "{answered}");
        let after: u64 = one(&mut c, uptime()).await.unwrap().parse().unwrap();
        assert!(after >= before, "the server restarted: uptime {before} s, then {after} s");
        drop(c);
        pool.disconnect().await.unwrap();
    });
}

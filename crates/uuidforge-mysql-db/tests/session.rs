//! The read-only session on the real MariaDB (scripts/mariadb-setup.sh;
//! UUIDFORGE_TEST_MARIADB): a write is refused by the server, and the
//! session keeps its snapshot while another connection writes.

use mysql_async::prelude::*;
use uuidforge_mysql_db::connect::Settings;
use uuidforge_mysql_db::session::Session;

#[test]
fn a_read_only_session_refuses_a_write_and_keeps_its_snapshot() {
    let url = std::env::var("UUIDFORGE_TEST_MARIADB").unwrap_or_else(|_| {
        panic!("UUIDFORGE_TEST_MARIADB is not set: run scripts/mariadb-setup.sh and export the line it prints")
    });
    let name = format!("uf_session_{}", std::process::id());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut writer = mysql_async::Conn::new(mysql_async::Opts::from_url(&url).unwrap()).await.unwrap();
            writer
                .query_drop(format!(
                    "DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}; CREATE TABLE {name}.t (id BINARY(16) PRIMARY KEY); INSERT INTO {name}.t VALUES (uuidv7_bin())"
                ))
                .await
                .unwrap();
            let settings = Settings::from_dsn(&format!("{url}/{name}"), &|_| None).unwrap();
            let mut session = Session::open(&settings).await.unwrap();
            assert!(session.server.mariadb && session.server.uuid_type_keeps_v7_order());
            let count = "SELECT COUNT(*) FROM t";
            assert_eq!(session.rows::<u64>("count", count, ()).await.unwrap(), [1]);
            writer.query_drop(format!("INSERT INTO {name}.t VALUES (uuidv7_bin())")).await.unwrap();
            assert_eq!(session.rows::<u64>("count", count, ()).await.unwrap(), [1], "the snapshot");
            let e = session
                .rows::<u64>("write", "INSERT INTO t VALUES (uuidv7_bin())", ())
                .await
                .unwrap_err();
            assert!(e.to_string().contains("READ ONLY"), "{e}");
            session.close().await.unwrap();
            writer.query_drop(format!("DROP DATABASE {name}")).await.unwrap();
            writer.disconnect().await.unwrap();
        });
}

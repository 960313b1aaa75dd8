//! A fresh database per test on the real server that scripts/pg-setup.sh
//! starts, built as the local superuser `uuidforge_admin`.
#![allow(dead_code)]

use tokio_postgres::{Client, NoTls};

pub const PASSWORD: &str = "uuidforge";

/// The port of the PostgreSQL server under test: 5432 (15), or
/// `UUIDFORGE_TEST_PGPORT` (scripts/test.sh sets 5418 for the run on 18).
pub fn port() -> String {
    std::env::var("UUIDFORGE_TEST_PGPORT").unwrap_or_else(|_| "5432".into())
}

pub fn url(user: &str, db: &str) -> String {
    format!(
        "postgres://{user}:{PASSWORD}@127.0.0.1:{}/{db}?sslmode=disable",
        port()
    )
}

pub async fn client(user: &str, db: &str) -> Client {
    let (client, conn) = tokio_postgres::connect(&url(user, db), NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect as {user} to {db}: {e} (run scripts/pg-setup.sh)"));
    tokio::spawn(conn);
    client
}

/// A database that exists for one test.
pub struct TestDb {
    pub name: String,
}

impl TestDb {
    pub async fn create(tag: &str) -> TestDb {
        let name = format!("uf_{tag}_{}", std::process::id());
        let admin = client("uuidforge_admin", "postgres").await;
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .await
            .unwrap();
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .await
            .unwrap();
        TestDb { name }
    }

    pub fn admin_url(&self) -> String {
        url("uuidforge_admin", &self.name)
    }

    pub async fn admin(&self) -> Client {
        client("uuidforge_admin", &self.name).await
    }

    pub async fn drop_now(self) {
        let admin = client("uuidforge_admin", "postgres").await;
        admin
            .batch_execute(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.name
            ))
            .await
            .unwrap();
    }
}

/// A login role (password `uuidforge`) that exists from now on; dropped
/// with its privileges on `db` first when it existed.
pub async fn fresh_role(db: &TestDb, role: &str) {
    let admin = db.admin().await;
    let exists = admin
        .query_opt("SELECT 1 FROM pg_roles WHERE rolname = $1", &[&role])
        .await
        .unwrap()
        .is_some();
    if exists {
        admin
            .batch_execute(&format!("DROP OWNED BY \"{role}\"; DROP ROLE \"{role}\""))
            .await
            .unwrap();
    }
    admin
        .batch_execute(&format!(
            "CREATE ROLE \"{role}\" LOGIN PASSWORD '{PASSWORD}'"
        ))
        .await
        .unwrap();
}

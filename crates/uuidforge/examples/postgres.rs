//! A round trip through PostgreSQL with tokio-postgres: UUIDv7 keys made
//! by the application, written as `uuid`, read back in key order (which
//! is creation order), and one time range selected by its two bounds.
//! Values are `uuid::Uuid`, so tokio-postgres (feature `with-uuid-1`)
//! binds and reads them with no adapter.
//!
//!     DATABASE_URL=postgres://USER:PASSWORD@localhost/DB cargo run -p uuidforge --example postgres

use std::time::{Duration, SystemTime};
use uuidforge::bounds::v7_range;
use uuidforge::Uuid;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!("postgres example: set DATABASE_URL (postgres://USER:PASSWORD@HOST/DB)");
        std::process::exit(2);
    };
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);

    client
        .batch_execute("CREATE TEMPORARY TABLE events (id uuid PRIMARY KEY, name text NOT NULL)")
        .await?;
    let insert = client
        .prepare("INSERT INTO events (id, name) VALUES ($1, $2)")
        .await?;
    let mut made = Vec::new();
    for n in 0..100 {
        let id = uuidforge::v7();
        client
            .execute(&insert, &[&id, &format!("event {n}")])
            .await?;
        made.push(id);
    }

    // Key order is creation order.
    let rows = client
        .query("SELECT id FROM events ORDER BY id", &[])
        .await?;
    let read: Vec<Uuid> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(read, made);

    // The last minute, by the key alone: an index range scan.
    let now = SystemTime::now();
    let range = v7_range(now - Duration::from_secs(60), now + Duration::from_secs(1))?;
    let end = range.end.expect("a bounded range");
    let recent = client
        .query_one(
            "SELECT count(*) FROM events WHERE id >= $1 AND id < $2",
            &[&range.start, &end],
        )
        .await?;
    let count: i64 = recent.get(0);
    assert_eq!(count, 100);
    println!("tokio-postgres: 100 keys written and read back in order; {count} in the last minute");
    Ok(())
}

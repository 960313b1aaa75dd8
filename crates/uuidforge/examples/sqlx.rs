//! The same round trip with sqlx (features `postgres`, `runtime-tokio`,
//! `uuid`): UUIDv7 keys written as `uuid`, read back in creation order,
//! and a time range selected by its two bounds.
//!
//!     DATABASE_URL=postgres://USER:PASSWORD@localhost/DB cargo run -p uuidforge --example sqlx

use sqlx::Connection;
use std::time::{Duration, SystemTime};
use uuidforge::bounds::v7_range;
use uuidforge::Uuid;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!("sqlx example: set DATABASE_URL (postgres://USER:PASSWORD@HOST/DB)");
        std::process::exit(2);
    };
    let mut db = sqlx::PgConnection::connect(&url).await?;
    sqlx::query("CREATE TEMPORARY TABLE events (id uuid PRIMARY KEY, name text NOT NULL)")
        .execute(&mut db)
        .await?;
    let mut made = Vec::new();
    for n in 0..100 {
        let id = uuidforge::v7();
        sqlx::query("INSERT INTO events (id, name) VALUES ($1, $2)")
            .bind(id)
            .bind(format!("event {n}"))
            .execute(&mut db)
            .await?;
        made.push(id);
    }

    let read: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM events ORDER BY id")
        .fetch_all(&mut db)
        .await?;
    assert_eq!(read, made);

    let now = SystemTime::now();
    let range = v7_range(now - Duration::from_secs(60), now + Duration::from_secs(1))?;
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM events WHERE id >= $1 AND id < $2")
        .bind(range.start)
        .bind(range.end.expect("a bounded range"))
        .fetch_one(&mut db)
        .await?;
    assert_eq!(count, 100);
    println!("sqlx: 100 keys written and read back in order; {count} in the last minute");
    Ok(())
}

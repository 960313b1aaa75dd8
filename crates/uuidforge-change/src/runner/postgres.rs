//! The runner's I/O ([`super::io`]) on a real server, over tokio-postgres:
//! every statement the runner itself runs (advisory locks, the state
//! table, the backfill's measures) is here, with the binding of a plan's
//! named values to the server's parameter types.

use super::io::{Database, Holder, Session, StateUpdate};
use super::state::{self, Position, Recorded, UnderWay, LEGACY_TABLE, STATE_TABLE};
use crate::action::{DataIo, Statement, Value};
use crate::backup::Backup as BackupFile;
use crate::ops::{Backup, ChangePlan};
use futures_util::pin_mut;
use std::path::Path;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config};
use uuid::Uuid;
use uuidforge_db::catalog::Snapshot;
use uuidforge_db::error::DbError;
use uuidforge_db::plan::Query;

/// Longest wait for a lock while changing a database: a change never
/// queues for long behind other sessions (nor makes them queue behind it).
pub const LOCK_TIMEOUT: &str = "5s";

/// A PostgreSQL server, as a connection reaches it.
pub struct Postgres<'a> {
    /// How to connect.
    pub config: &'a Config,
}

impl Database for Postgres<'_> {
    type Session = PgSession<'static>;

    async fn connect(&self) -> Result<PgSession<'static>, DbError> {
        Ok(PgSession {
            client: Conn::Owned(uuidforge_db::client::connect(self.config).await?),
        })
    }

    fn back_up(
        &self,
        server_version_num: i32,
        what: &Backup,
        file: &Path,
    ) -> Result<BackupFile, DbError> {
        crate::backup::dump(self.config, server_version_num, what, file)
    }
}

enum Conn<'a> {
    Owned(Client),
    Borrowed(&'a Client),
}

/// A connection the runner uses: its own, or a read-only session's (a plan
/// refused when a change under way writes the same tables).
pub struct PgSession<'a> {
    client: Conn<'a>,
}

impl<'a> PgSession<'a> {
    /// The session of `client` (a read-only session planning).
    pub fn over(client: &'a Client) -> PgSession<'a> {
        PgSession {
            client: Conn::Borrowed(client),
        }
    }

    fn client(&self) -> &Client {
        match &self.client {
            Conn::Owned(c) => c,
            Conn::Borrowed(c) => c,
        }
    }
}

type Boxed = Box<dyn ToSql + Sync + Send>;

/// The values of `statement`'s bindings, in order, typed as the prepared
/// statement's parameters: text given for a number or a uuid is parsed
/// into it (a value an earlier step kept).
fn values(statement: &Statement, types: &[Type]) -> Result<Vec<Boxed>, DbError> {
    statement
        .bindings
        .iter()
        .zip(types)
        .map(|(b, ty)| -> Result<Boxed, DbError> {
            Ok(match &b.value {
                Value::Uuid(u) => Box::new(*u),
                Value::Uuids(u) => Box::new(u.clone()),
                Value::Texts(t) => Box::new(t.clone()),
                Value::Text(None) => Box::new(None::<String>),
                Value::Text(Some(text)) => {
                    let bad = |e: String| {
                        DbError::unreadable(b.name.clone(), format!("'{text}' as {ty}: {e}"))
                    };
                    match *ty {
                        Type::INT8 => {
                            Box::new(text.parse::<i64>().map_err(|e| bad(e.to_string()))?)
                        }
                        Type::INT4 => {
                            Box::new(text.parse::<i32>().map_err(|e| bad(e.to_string()))?)
                        }
                        Type::UUID => {
                            Box::new(text.parse::<Uuid>().map_err(|e| bad(e.to_string()))?)
                        }
                        _ => Box::new(text.clone()),
                    }
                }
                Value::Output => {
                    return Err(DbError::unreadable(
                        "plan",
                        format!("'{}' was not bound before the statement ran", b.name),
                    ))
                }
            })
        })
        .collect()
}

fn refs(values: &[Boxed]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| v.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

impl PgSession<'_> {
    async fn prepared(
        &self,
        statement: &Statement,
    ) -> Result<(tokio_postgres::Statement, Vec<Boxed>), DbError> {
        let prepared = self
            .client()
            .prepare(&statement.sql)
            .await
            .map_err(|e| uuidforge_db::client::driver_error(statement.sql.clone(), e))?;
        let values = values(statement, prepared.params())?;
        Ok((prepared, values))
    }

    async fn exec(
        &self,
        context: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, DbError> {
        self.client()
            .execute(sql, params)
            .await
            .map_err(|e| uuidforge_db::client::driver_error(context.to_string(), e))
    }
}

impl DataIo for PgSession<'_> {
    async fn text_and_times(&self, sql: &str) -> Result<Vec<(String, Option<i64>)>, DbError> {
        let rows = self
            .client()
            .query(sql, &[])
            .await
            .map_err(|e| uuidforge_db::client::driver_error("read the keys", e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, Option<String>>(0).unwrap_or_default(), r.get(1)))
            .collect())
    }

    async fn copy_key_map(
        &self,
        map: &str,
        rows: &[(String, Option<i64>)],
        keys: &[Uuid],
    ) -> Result<(), DbError> {
        use tokio_postgres::binary_copy::BinaryCopyInWriter;
        let failed = |e| uuidforge_db::client::driver_error("copy the key map", e);
        let sink = self
            .client()
            .copy_in(&format!("COPY {map} (old, new) FROM STDIN (FORMAT binary)"))
            .await
            .map_err(failed)?;
        let writer = BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::UUID]);
        pin_mut!(writer);
        for ((key, _), uuid) in rows.iter().zip(keys) {
            writer.as_mut().write(&[key, uuid]).await.map_err(failed)?;
        }
        writer.finish().await.map_err(failed)?;
        Ok(())
    }

    async fn text(&self, statement: &Statement) -> Result<Option<String>, DbError> {
        let (prepared, values) = self.prepared(statement).await?;
        let row = self
            .client()
            .query_opt(&prepared, &refs(&values))
            .await
            .map_err(|e| uuidforge_db::client::driver_error(statement.sql.clone(), e))?;
        Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
    }

    async fn run(&self, statement: &Statement) -> Result<u64, DbError> {
        let (prepared, values) = self.prepared(statement).await?;
        self.client()
            .execute(&prepared, &refs(&values))
            .await
            .map_err(|e| uuidforge_db::client::driver_error(statement.sql.clone(), e))
    }
}

impl Session for PgSession<'_> {
    async fn execute(&self, sql: &str) -> Result<(), DbError> {
        self.client()
            .batch_execute(sql)
            .await
            .map_err(|e| uuidforge_db::client::driver_error(sql.to_string(), e))
    }

    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        uuidforge_db::client::read_snapshot(self.client()).await
    }

    async fn read(&self, query: &Query, context: &str) -> Result<String, DbError> {
        let params = uuidforge_db::client::bind(&query.params);
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let row = self
            .client()
            .query_opt(query.sql.as_str(), &refs)
            .await
            .map_err(|e| uuidforge_db::client::driver_error(context, e))?;
        Ok(row
            .and_then(|r| r.get::<_, Option<String>>(0))
            .unwrap_or_default())
    }

    async fn pid(&self) -> Result<i32, DbError> {
        Ok(self
            .client()
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .map_err(|e| uuidforge_db::client::driver_error("lock the tables", e))?
            .get(0))
    }

    async fn deadlock_timeout_ms(&self) -> Result<i64, DbError> {
        Ok(self
            .client()
            .query_one(
                "SELECT setting::int8 FROM pg_settings WHERE name = 'deadlock_timeout'",
                &[],
            )
            .await
            .map_err(|e| uuidforge_db::client::driver_error("read deadlock_timeout", e))?
            .get(0))
    }

    async fn try_advisory_lock(&self, key: i64) -> Result<bool, DbError> {
        Ok(self
            .client()
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await
            .map_err(|e| uuidforge_db::client::driver_error("lock the tables", e))?
            .get(0))
    }

    async fn advisory_holder(&self, key: i64) -> Result<Option<Holder>, DbError> {
        let (class, oid) = (key >> 32, key & 0xffff_ffff);
        let row = self
            .client()
            .query_opt(
                "SELECT a.pid, to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ'), a.pid = pg_backend_pid() \
                 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                 WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                   AND l.classid = $1::int8::oid AND l.objid = $2::int8::oid AND l.objsubid = 1 \
                 ORDER BY a.pid = pg_backend_pid() DESC LIMIT 1",
                &[&class, &oid],
            )
            .await
            .map_err(|e| uuidforge_db::client::driver_error("read the changes under way", e))?;
        Ok(row.map(|r| Holder {
            pid: r.get(0),
            since: r.get::<_, Option<String>>(1).unwrap_or_default(),
            mine: r.get(2),
        }))
    }

    async fn unlock_all(&self) {
        let _ = self
            .client()
            .batch_execute("SELECT pg_advisory_unlock_all()")
            .await;
    }

    async fn under_way(&self, oids: &[u32]) -> Result<Vec<UnderWay>, DbError> {
        let failed = |e| uuidforge_db::client::driver_error("read the changes under way", e);
        let tables: Option<String> = self
            .client()
            .query_one(state::TABLES_SQL, &[&STATE_TABLE, &LEGACY_TABLE])
            .await
            .map_err(failed)?
            .get(0);
        let tables: Vec<(String, bool)> =
            serde_json::from_str::<Vec<(String, bool)>>(tables.as_deref().unwrap_or("[]"))
                .map(|t| t.into_iter().map(|(name, ours)| (name, !ours)).collect())
                .map_err(|e| DbError::unreadable("read the changes under way", e.to_string()))?;
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let oids: Vec<i64> = oids.iter().map(|&o| i64::from(o)).collect();
        let json: Option<String> = self
            .client()
            .query_one(&state::rows_sql(&tables), &[&oids])
            .await
            .map_err(failed)?
            .get(0);
        serde_json::from_str(json.as_deref().unwrap_or("[]"))
            .map_err(|e| DbError::unreadable("read the changes under way", e.to_string()))
    }

    async fn record(&self, change: &ChangePlan, pid: i32) -> Result<Recorded, DbError> {
        let table = uuidforge_ident::qualified(&change.schema, STATE_TABLE);
        let failed = |e| uuidforge_db::client::driver_error("record the change's state", e);
        self.client()
            .batch_execute(&state::create_sql(&table, &change.schema))
            .await
            .map_err(failed)?;
        let json = state::plan_json(change)?;
        let oids: Vec<i64> = change.touches.iter().map(|t| i64::from(t.oid)).collect();
        let id: i64 = self
            .client()
            .query_one(
                &format!("INSERT INTO {table} (operation, target, tables, plan, step, pid) VALUES ($1, $2, $3::int8[]::oid[], $4::text::jsonb, 1, $5) RETURNING id"),
                &[&change.operation, &change.target, &oids, &json, &pid],
            )
            .await
            .map_err(failed)?
            .get(0);
        Ok(Recorded {
            table,
            id,
            schema: change.schema.clone(),
        })
    }

    async fn position(&self, at: &Recorded) -> Result<Option<Position>, DbError> {
        let row = self
            .client()
            .query_opt(
                &format!("SELECT step, next_block, end_block, marks::text FROM {} WHERE id = $1 FOR UPDATE", at.table),
                &[&at.id],
            )
            .await
            .map_err(|e| uuidforge_db::client::driver_error("read the change's state", e))?;
        let Some(row) = row else { return Ok(None) };
        let step: i32 = row.get(0);
        let marks: String = row.get(3);
        Ok(Some(Position {
            step: usize::try_from(step).unwrap_or(0),
            next_block: row.get(1),
            end_block: row.get(2),
            marks: serde_json::from_str(&marks).unwrap_or_default(),
        }))
    }

    async fn update(&self, at: &Recorded, update: StateUpdate) -> Result<(), DbError> {
        let context = "record the change's state";
        let t = &at.table;
        match update {
            StateUpdate::Claim(pid) => {
                self.exec(context, &format!("UPDATE {t} SET pid = $2 WHERE id = $1"), &[&at.id, &pid])
                    .await?
            }
            StateUpdate::Advance(next) => {
                let next = i32::try_from(next).unwrap_or(i32::MAX);
                self.exec(
                    context,
                    &format!("UPDATE {t} SET step = $2, next_block = NULL, end_block = NULL, updated_at = now() WHERE id = $1"),
                    &[&at.id, &next],
                )
                .await?
            }
            StateUpdate::Mark(name) => {
                self.exec(
                    context,
                    &format!("UPDATE {t} SET marks = marks || jsonb_build_object($2::text, pg_current_xact_id()::text) WHERE id = $1"),
                    &[&at.id, &name],
                )
                .await?
            }
            StateUpdate::TablesByName => {
                self.exec(
                    context,
                    &format!("UPDATE {t} SET tables = array(SELECT to_regclass(r.name)::oid FROM jsonb_array_elements_text(plan->'backup'->'relations') WITH ORDINALITY r(name, n) ORDER BY r.n) WHERE id = $1"),
                    &[&at.id],
                )
                .await?
            }
            StateUpdate::Part(key, value) => {
                let updated = self
                    .exec(
                        context,
                        &format!("UPDATE {t} SET marks = marks || jsonb_build_object($2::text, $3::text), updated_at = now() WHERE id = $1"),
                        &[&at.id, &key, &value],
                    )
                    .await?;
                if updated == 0 {
                    return Err(DbError::conflict(
                        "resume",
                        "the change's state was removed while it ran",
                    ));
                }
                updated
            }
            StateUpdate::Pages(next, end) => {
                self.exec(
                    context,
                    &format!("UPDATE {t} SET next_block = $2, end_block = $3, updated_at = now() WHERE id = $1"),
                    &[&at.id, &next, &end],
                )
                .await?
            }
        };
        Ok(())
    }

    async fn finish(&self, at: &Recorded) -> Result<(), DbError> {
        let context = "remove the change's state";
        self.exec(
            context,
            &format!("DELETE FROM {} WHERE id = $1", at.table),
            &[&at.id],
        )
        .await?;
        self.client()
            .batch_execute(&state::drop_when_empty_sql(&at.table, &at.schema))
            .await
            .map_err(|e| uuidforge_db::client::driver_error(context, e))
    }

    async fn counts(&self, sql: &str, binds: &[i64]) -> Result<String, DbError> {
        let params: Vec<&(dyn ToSql + Sync)> =
            binds.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        let json: Option<String> = self
            .client()
            .query_one(sql, &params)
            .await
            .map_err(|e| uuidforge_db::client::driver_error(sql.to_string(), e))?
            .get(0);
        Ok(json.unwrap_or_default())
    }

    async fn pages(&self, table: &str) -> Result<(i64, f64), DbError> {
        let row = self
            .client()
            .query_one(
                "SELECT (pg_relation_size(c.oid) / current_setting('block_size')::int8)::int8, \
                 CASE WHEN c.reltuples > 0 AND c.relpages > 0 THEN c.reltuples / c.relpages ELSE 100 END::float8 \
                 FROM pg_class c WHERE c.oid = $1::text::regclass",
                &[&table],
            )
            .await
            .map_err(|e| uuidforge_db::client::driver_error(format!("measure {table}"), e))?;
        Ok((row.get(0), row.get(1)))
    }

    async fn fill(&self, sql: &str, from: i64, until: i64) -> Result<(i64, i64), DbError> {
        let row = self
            .client()
            .query_one(sql, &[&from, &until])
            .await
            .map_err(|e| uuidforge_db::client::driver_error(sql.to_string(), e))?;
        Ok((row.get(0), row.get(1)))
    }
}

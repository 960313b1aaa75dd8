//! D5 in SQL: `uuid_find(value, schemas)` finds a UUID anywhere in the
//! database, through the same planner as `uuidforge db find` and the HTTP
//! API (`uuidforge-db` without its client), run through SPI.
//!
//! The function is `SECURITY INVOKER`: it sees what the calling role may
//! read, and tables it may not read are left out (a NOTICE names them).
//! SPI runs its statements read-only.

use crate::errors::{invalid_argument, invalid_text};
use crate::generate::to_pg;
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use pgrx::JsonB;
use uuidforge_db::catalog::{Snapshot, SNAPSHOT_SQL};
use uuidforge_db::find::{self, FindOptions, Needles};
use uuidforge_db::plan::Param;

fn bind(params: &[Param]) -> Vec<DatumWithOid<'static>> {
    params
        .iter()
        .map(|p| match p {
            Param::Text(t) => DatumWithOid::from(t.clone()),
            Param::TextArray(list) => DatumWithOid::from(list.clone()),
            Param::UuidArray(list) => {
                DatumWithOid::from(list.iter().map(|u| to_pg(*u)).collect::<Vec<_>>())
            }
            Param::ByteaArray(list) => DatumWithOid::from(list.clone()),
        })
        .collect()
}

fn spi_failed(what: &str, e: impl std::fmt::Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        format!("uuid_find: {what}: {e}")
    );
}

type FoundRow = (
    String,
    String,
    String,
    Option<String>,
    String,
    JsonB,
    pgrx::Uuid,
);

/// Every place that holds `value` (any spelling: canonical in any case,
/// braces, URN, 32 hex, Crockford Base32, UUID_192 text by its left 128
/// bits) in every container (uuid, uuid[], uuid192, text and text[] also
/// inside longer text, json/jsonb at any depth as key or value, bytea(16),
/// domains, composite types), in the schemas given (all when NULL).
/// `path` is the JSON path inside the value (NULL when the value is the
/// UUID), `role` says whether a JSON object key or a value holds it, and
/// `key` is the row's primary key as JSON (`{"ctid": …}` for a table
/// without one: valid only within the current snapshot).
#[pg_extern(stable, parallel_restricted, security_invoker)]
#[allow(clippy::type_complexity)]
fn uuid_find(
    value: Option<&str>,
    schemas: default!(Option<Vec<Option<String>>>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(schema, String),
        name!(table, String),
        name!(column, String),
        name!(path, Option<String>),
        name!(role, String),
        name!(key, JsonB),
        name!(value, pgrx::Uuid),
    ),
> {
    // NULL in, nothing out (the set-returning form of NULL in, NULL out).
    let Some(value) = value else {
        return TableIterator::new(Vec::new());
    };
    let needles = match Needles::parse([("value".to_string(), value)]) {
        Ok(n) if !n.is_empty() => n,
        Ok(_) => invalid_argument("uuid_find", "value", "''", "a UUID in any spelling"),
        Err(e) => invalid_text("uuid", value, e.expected),
    };
    let options = FindOptions {
        schemas: schemas.unwrap_or_default().into_iter().flatten().collect(),
        ..FindOptions::default()
    };
    let rows: Vec<FoundRow> = Spi::connect(|client| {
        let json: Option<String> = client
            .select(SNAPSHOT_SQL.as_str(), None, &[])
            .and_then(|t| t.first().get_one::<String>())
            .unwrap_or_else(|e| spi_failed("read the catalog", e));
        let snapshot = Snapshot::from_json(json.as_deref().unwrap_or(""))
            .unwrap_or_else(|e| spi_failed("read the catalog", e));
        let plan = find::plan(&snapshot, &needles, &options);
        for skipped in &plan.skipped {
            pgrx::notice!(
                "uuid_find: {}.{} skipped: {}",
                skipped.schema,
                skipped.table,
                skipped.reason
            );
        }
        let mut out = Vec::new();
        for step in plan.probes.iter().chain(&plan.scans) {
            let args = bind(&step.query.params);
            let table = client
                .select(step.query.sql.as_str(), None, &args)
                .unwrap_or_else(|e| spi_failed(&format!("{}.{}", step.schema, step.table), e));
            for row in table {
                let text: Option<String> = row
                    .get(1)
                    .unwrap_or_else(|e| spi_failed(&format!("{}.{}", step.schema, step.table), e));
                let hits = find::hits_in_row(step, text.as_deref().unwrap_or(""), &needles)
                    .unwrap_or_else(|e| spi_failed("read a row", e));
                for hit in hits {
                    let uuid = hit
                        .value
                        .parse::<uuid::Uuid>()
                        .unwrap_or_else(|e| spi_failed("read a hit", e));
                    out.push((
                        hit.schema,
                        hit.table,
                        hit.column,
                        hit.path,
                        hit.role.to_string(),
                        JsonB(hit.key),
                        to_pg(uuid),
                    ));
                }
            }
        }
        out
    });
    TableIterator::new(rows)
}

/// The values a call site looks for, kept for the whole statement in the
/// function's `fn_extra`: built on the first row, reused while the
/// argument is the same array (a bound parameter is one datum for the
/// whole statement), so a row costs one scan of its text and a hash
/// lookup per token, whatever the number of values.
struct NeedleSet {
    datum: Option<pg_sys::Datum>,
    set: std::collections::HashSet<uuid::Uuid>,
}

/// Whether `text` holds one of `needles` (a `uuid[]`) as a UUID token in
/// any spelling (canonical in any case, braces, URN, 32 hex, Base32,
/// UUID_192 text or Base32 by its left 128 bits), not inside a longer
/// word. `uuidforge db find` narrows text with it when searching many
/// values at once, where a regular expression would cost far more.
/// (`anyarray` so that the array is not unpacked for every row.)
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_text_holds_any(
    text: &str,
    needles: pgrx::AnyArray,
    fcinfo: pg_sys::FunctionCallInfo,
) -> bool {
    // SAFETY: fcinfo is this call's; fn_extra lives as long as the call
    // site (one statement) and holds only this type.
    let mut cached = unsafe {
        pgrx::fcinfo::pg_func_extra(fcinfo, || NeedleSet {
            datum: None,
            set: Default::default(),
        })
    };
    if cached.datum != Some(needles.datum()) {
        if needles.oid() != pg_sys::UUIDARRAYOID {
            invalid_argument(
                "uuid_text_holds_any",
                "needles",
                "an array of another type",
                "uuid[]",
            );
        }
        let array: Array<pgrx::Uuid> = pgrx::AnyArray::into::<Array<pgrx::Uuid>>(&needles)
            .unwrap_or_else(|| spi_failed("read the values", "not an array"));
        cached.set = array
            .iter()
            .flatten()
            .map(crate::generate::from_pg)
            .collect();
        cached.datum = Some(needles.datum());
    }
    uuidforge::scan::tokens(text.as_bytes()).any(|t| cached.set.contains(&t.uuid))
}

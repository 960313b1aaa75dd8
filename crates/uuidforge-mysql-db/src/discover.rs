//! `db discover` on MariaDB and MySQL: the keys and references the data
//! supports, counted over every row: a column whose values are all there
//! and distinct is a key (or already declared one); a column whose every
//! value is some key's value (compared as UUIDs across storage forms) is
//! a reference. The DDL that would declare each is printed, never run; a
//! reference between two storage forms is named with the conversion it
//! needs first.

use crate::catalog::{quote, Candidate, Catalog, Form};
use crate::columns::UuidColumn;
use crate::session::Session;
use serde::Serialize;
use uuidforge_store::error::DbError;

/// A key the data supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Key {
    /// `schema.table.column`.
    pub column: String,
    /// Its form.
    pub form: &'static str,
    /// Its rows.
    pub rows: u64,
    /// Declared already (a primary key or a unique index of it alone).
    pub declared: bool,
    /// The DDL that would declare it.
    pub ddl: Option<String>,
}

/// A reference the data supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reference {
    /// The referencing `schema.table.column`.
    pub from: String,
    /// The key it references.
    pub to: String,
    /// The referencing column's distinct values, each a key's.
    pub values: u64,
    /// Declared already.
    pub declared: bool,
    /// The DDL that would declare it (both columns of one form).
    pub ddl: Option<String>,
    /// What stands in the way, when the forms differ.
    pub note: Option<String>,
}

/// What discovery found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Discovery {
    /// Keys.
    pub keys: Vec<Key>,
    /// References.
    pub references: Vec<Reference>,
}

/// Keys and references among `columns` (JSON left out: no key lives in a
/// document).
pub async fn discover(
    session: &mut Session,
    catalog: &Catalog,
    columns: &[UuidColumn],
) -> Result<Discovery, DbError> {
    let typed: Vec<&Candidate> = columns
        .iter()
        .map(|c| &c.candidate)
        .filter(|c| !matches!(c.form, Form::Json | Form::Binary))
        .collect();
    let mut found = Discovery::default();
    let mut keys: Vec<&Candidate> = Vec::new();
    for c in &typed {
        let counts: Vec<(u64, u64, u64)> = session
            .rows(
                &format!("count {}", c.display()),
                &format!(
                    "SELECT COUNT(*), COUNT({k}), COUNT(DISTINCT {canonical}) FROM {}",
                    c.table_sql(),
                    k = c.column_sql(),
                    canonical = c.form.canonical(&c.column_sql())
                ),
                (),
            )
            .await?;
        let (rows, present, distinct) = counts.first().copied().unwrap_or_default();
        let declared = catalog.unique(c);
        // A table without a primary key: its column whose values are all
        // there and distinct is proposed as one (one per table). A unique
        // column of a table that has one may well be a reference (one row
        // per row elsewhere): it is not proposed as a key.
        let keyless = catalog.primary_key(&c.schema, &c.table).is_empty()
            && !keys
                .iter()
                .any(|k| k.schema == c.schema && k.table == c.table);
        if declared || (keyless && rows > 0 && present == rows && distinct == rows) {
            let ddl = (!declared).then(|| {
                format!(
                    "ALTER TABLE {} ADD PRIMARY KEY ({});",
                    c.table_sql(),
                    c.column_sql()
                )
            });
            found.keys.push(Key {
                column: c.display(),
                form: c.form.name(),
                rows,
                declared,
                ddl,
            });
            keys.push(c);
        }
    }
    for x in &typed {
        // A table's own primary key (declared or proposed) references
        // nothing here.
        let own_key = catalog.primary_key(&x.schema, &x.table) == [x.column.clone()]
            || found
                .keys
                .iter()
                .any(|k| k.column == x.display() && !k.declared);
        if own_key {
            continue;
        }
        for k in &keys {
            if k.schema == x.schema && k.table == x.table {
                continue;
            }
            let declared = catalog.foreign_keys.iter().any(|f| {
                f.from == (x.schema.clone(), x.table.clone(), x.column.clone())
                    && f.to == (k.schema.clone(), k.table.clone(), k.column.clone())
            });
            let counts: Vec<(u64, u64)> = session
                .rows(
                    &format!("compare {} with {}", x.display(), k.display()),
                    &format!(
                        "SELECT COUNT(*), COUNT(b.v) FROM (SELECT DISTINCT {} v FROM {} WHERE {} IS NOT NULL) a \
                         LEFT JOIN (SELECT {} v FROM {}) b ON b.v = a.v",
                        x.form.canonical(&x.column_sql()),
                        x.table_sql(),
                        x.column_sql(),
                        k.form.canonical(&k.column_sql()),
                        k.table_sql()
                    ),
                    (),
                )
                .await?;
            let (values, matched) = counts.first().copied().unwrap_or_default();
            if !declared && (values == 0 || matched < values) {
                continue;
            }
            let same_form = x.form == k.form && x.column_type == k.column_type;
            let ddl = (!declared && same_form).then(|| {
                format!(
                    "ALTER TABLE {} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({});",
                    x.table_sql(),
                    quote(&cut(&format!("fk_{}_{}", x.table, x.column))),
                    x.column_sql(),
                    k.table_sql(),
                    k.column_sql()
                )
            });
            let note = (!declared && !same_form).then(|| {
                format!(
                    "the forms differ ({} {}, {} {}): convert one first (uuidforge db convert-uuid)",
                    x.display(),
                    x.form.name(),
                    k.display(),
                    k.form.name()
                )
            });
            found.references.push(Reference {
                from: x.display(),
                to: k.display(),
                values,
                declared,
                ddl,
                note,
            });
        }
    }
    Ok(found)
}

/// A name cut to MariaDB's 64 characters.
fn cut(name: &str) -> String {
    name.chars().take(64).collect()
}

//! `db columns` over a fleet: each UUID column once, with the members that
//! have it and its index status on each, and — its own section — where
//! the members differ (schema drift): a column, an index or a type some
//! members have and others not.

use serde::Serialize;
use std::collections::BTreeMap;
use uuidforge_db::columns::UuidColumn;

/// A column as the fleet has it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetColumn {
    /// Schema.
    pub schema: String,
    /// Table, view or materialized view.
    pub table: String,
    /// Column.
    pub column: String,
    /// Its type on each member that has it.
    pub types: BTreeMap<String, String>,
    /// Its index status on each member that has it (`leading`, `none`, …).
    pub index: BTreeMap<String, String>,
}

/// A difference between the members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Drift {
    /// `schema.table.column`.
    pub column: String,
    /// `missing`, `index` or `type`.
    pub kind: &'static str,
    /// What differs, member by member.
    pub detail: String,
}

/// The columns of every member that answered, merged, and where they
/// differ. Members are compared only with those that answered.
///
/// ```
/// use uuidforge_fleet::columns::merge;
/// let (merged, drift) = merge(&[("a".to_string(), vec![]), ("b".to_string(), vec![])]);
/// assert!(merged.is_empty() && drift.is_empty());
/// ```
pub fn merge(answers: &[(String, Vec<UuidColumn>)]) -> (Vec<FleetColumn>, Vec<Drift>) {
    let mut by_column: BTreeMap<(String, String, String), FleetColumn> = BTreeMap::new();
    for (member, columns) in answers {
        for c in columns {
            let entry = by_column
                .entry((c.schema.clone(), c.table.clone(), c.column.clone()))
                .or_insert_with(|| FleetColumn {
                    schema: c.schema.clone(),
                    table: c.table.clone(),
                    column: c.column.clone(),
                    types: BTreeMap::new(),
                    index: BTreeMap::new(),
                });
            entry.types.insert(member.clone(), c.type_name.clone());
            entry
                .index
                .insert(member.clone(), c.index_description.clone());
        }
    }
    let members: Vec<&String> = answers.iter().map(|(m, _)| m).collect();
    let mut drift = Vec::new();
    for c in by_column.values() {
        let name = format!("{}.{}.{}", c.schema, c.table, c.column);
        let missing: Vec<&str> = members
            .iter()
            .filter(|m| !c.types.contains_key(**m))
            .map(|m| m.as_str())
            .collect();
        if !missing.is_empty() {
            drift.push(Drift {
                column: name.clone(),
                kind: "missing",
                detail: format!(
                    "on {}; missing on {}",
                    c.types.keys().cloned().collect::<Vec<_>>().join(", "),
                    missing.join(", ")
                ),
            });
        }
        for (kind, values) in [("type", &c.types), ("index", &c.index)] {
            let first = values.values().next();
            if values.values().any(|v| Some(v) != first) {
                drift.push(Drift {
                    column: name.clone(),
                    kind,
                    detail: values
                        .iter()
                        .map(|(m, v)| format!("{m}: {v}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                });
            }
        }
    }
    (by_column.into_values().collect(), drift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuidforge_db::catalog::Snapshot;

    fn columns(sql_kinds: &[(&str, &str, bool)]) -> Vec<UuidColumn> {
        // (table, type, indexed): a snapshot with one uuid column per table.
        let relations: Vec<String> = sql_kinds
            .iter()
            .enumerate()
            .map(|(i, (t, ty, _))| {
                format!(
                    r#"{{"oid":{},"schema":"public","name":"{t}","kind":"r","is_partition":false,"partition_of":0,"heap_pages":true,"can_select":true,"est_rows":10,"bytes":8192,
                        "columns":[{{"num":1,"name":"id","type_oid":{},"type_name":"{ty}","not_null":true,"can_select":true}}]}}"#,
                    100 + i,
                    if *ty == "uuid" { 2950 } else { 25 }
                )
            })
            .collect();
        let indexes: Vec<String> = sql_kinds
            .iter()
            .enumerate()
            .filter(|(_, (_, _, ix))| *ix)
            .map(|(i, (t, _, _))| {
                format!(
                    r#"{{"oid":{},"name":"{t}_id","table":{},"keys":[1],"valid":true,"unique":false,"primary":false,"method":"btree","predicate":null,"expressions":null,"referenced":[1]}}"#,
                    200 + i,
                    100 + i
                )
            })
            .collect();
        let snapshot = Snapshot::from_json(&format!(
            r#"{{"database":"d","user":"u","server_version_num":150000,"extension_schema":null,
                 "relations":[{}],"types":[{{"oid":2950,"name":"uuid","schema":"pg_catalog","typtype":"b","base":0,"elem":0,"relid":0}}],
                 "indexes":[{}],"constraints":[],"view_rules":[]}}"#,
            relations.join(","),
            indexes.join(",")
        ))
        .unwrap();
        uuidforge_db::columns::uuid_columns(&snapshot, &Default::default(), 0.5)
    }

    #[test]
    fn drift_names_the_missing_column_the_index_and_the_type() {
        let a = columns(&[("orders", "uuid", true), ("events", "uuid", false)]);
        let b = columns(&[("orders", "uuid", false)]);
        let c = columns(&[("orders", "uuid", true), ("events", "uuid", false)]);
        let (merged, drift) = merge(&[("a".into(), a), ("b".into(), b), ("c".into(), c)]);
        assert_eq!(merged.len(), 2);
        let kinds: Vec<(&str, &str)> = drift.iter().map(|d| (d.column.as_str(), d.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("public.events.id", "missing"),
                ("public.orders.id", "index")
            ],
            "{drift:?}"
        );
        assert!(drift[0].detail.contains("missing on b"), "{drift:?}");
        assert!(drift[1].detail.contains("b: no index"), "{drift:?}");
    }
}

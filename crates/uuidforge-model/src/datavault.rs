//! Target `datavault`: hubs, links, satellites and effectivity satellites
//! with UUIDv7 keys, a staging table and a loader per source.
//!
//! | object | name | columns |
//! |---|---|---|
//! | hub | `hub_actor` | `actor_key uuid`, the business key (`name`, or `actor_bk text`), `load_ts`, `record_source` |
//! | satellite | `sat_actor__casting` (one per anchor and source) | `actor_key`, `load_ts`, `hash_diff`, `record_source`, the attributes the source maps |
//! | link | `link_actor_part_program_in_rating_got` | `link_key uuid`, `part_actor_key`, `in_program_key`, knot roles as values (`got_rating`), `load_ts`, `record_source` |
//! | effectivity | `eff_…` (historized ties) | `link_key`, `load_ts`, `record_source`, `ended` |
//! | reference | `ref_rating` (knots) | `value` |
//! | staging | `stage_casting` | the source's columns, `text` |
//! | loader | `load_casting(load_time timestamptz DEFAULT now())` | loads the staging rows |
//! | queries | `actor_at(ts)`, view `actor_latest`; `link_…_at(ts)` | hubs with the satellite values (or links in effect) at a load time |
//!
//! Hub and link keys are `uuidv7_from(load time, business key, secret)`
//! (`hub_keys: v7_from`, the default): sorted by load time like any
//! UUIDv7, and the same on every loader that loads the same business key
//! at the same load time, as hash keys are — without their cost or
//! their collisions. The secret is the setting `uuidforge.hub_key_secret`
//! (64 hex digits). With `hub_keys: uuidv7` keys are fresh `uuidv7()`.
//! Satellites get a row only when the hash of their values changes.

use crate::bitemporal::{snake, tie_table};
use crate::ddl::{table_function, Ddl};
use crate::model::{Anchor, Attribute, HubKeys, Model, ModelError, Source, SourceAnchor, Tie};
use crate::sqltype::pg_type;

/// A satellite: its anchor, the source filling it (`None`: the model has
/// no sources) and its attributes.
struct Satellite<'m> {
    anchor: &'m Anchor,
    source: Option<&'m Source>,
    attributes: Vec<&'m Attribute>,
}

impl Satellite<'_> {
    fn table(&self) -> String {
        match self.source {
            Some(s) => format!("sat_{}__{}", snake(&self.anchor.descriptor), s.name),
            None => format!("sat_{}", snake(&self.anchor.descriptor)),
        }
    }
}

fn satellites(model: &Model) -> Vec<Satellite<'_>> {
    let mut out = Vec::new();
    for anchor in &model.anchors {
        let own = |a: &&Attribute| !anchor.business_key.contains(&a.mnemonic);
        if model.sources.is_empty() {
            let attributes: Vec<&Attribute> = anchor.attributes.iter().filter(own).collect();
            if !attributes.is_empty() {
                out.push(Satellite {
                    anchor,
                    source: None,
                    attributes,
                });
            }
            continue;
        }
        for source in &model.sources {
            let attributes: Vec<&Attribute> = anchor
                .attributes
                .iter()
                .filter(own)
                .filter(|a| {
                    source.anchors.iter().any(|m| {
                        m.anchor == anchor.mnemonic && m.attributes.contains_key(&a.mnemonic)
                    })
                })
                .collect();
            if !attributes.is_empty() {
                out.push(Satellite {
                    anchor,
                    source: Some(source),
                    attributes,
                });
            }
        }
    }
    out
}

fn hub(anchor: &Anchor) -> String {
    format!("hub_{}", snake(&anchor.descriptor))
}

fn key_column(anchor: &Anchor) -> String {
    format!("{}_key", snake(&anchor.descriptor))
}

/// The business key columns of a hub: (name, type, attribute mnemonic).
fn business_key(model: &Model, anchor: &Anchor) -> Vec<(String, String, Option<String>)> {
    if anchor.business_key.is_empty() {
        return vec![(
            format!("{}_bk", snake(&anchor.descriptor)),
            "text".into(),
            None,
        )];
    }
    anchor
        .business_key
        .iter()
        .map(|m| {
            let a = anchor
                .attributes
                .iter()
                .find(|a| &a.mnemonic == m)
                .expect("validated");
            (
                snake(&a.descriptor),
                attribute_type(model, a),
                Some(m.clone()),
            )
        })
        .collect()
}

/// An attribute's column type: its own, or its knot's value type.
fn attribute_type(model: &Model, attribute: &Attribute) -> String {
    match (&attribute.data_type, &attribute.knot) {
        (Some(t), _) => pg_type(t).expect("validated"),
        (None, Some(k)) => {
            pg_type(&model.knot(k).expect("validated").data_type).expect("validated")
        }
        _ => unreachable!("validated"),
    }
}

fn ref_table(model: &Model, knot: &str) -> String {
    format!(
        "ref_{}",
        snake(&model.knot(knot).expect("validated").descriptor)
    )
}

/// A link's columns: (column, type, hub or reference table, role).
fn link_columns<'m>(
    model: &'m Model,
    tie: &'m Tie,
) -> Vec<(String, String, String, &'m crate::model::Role)> {
    tie.roles
        .iter()
        .map(|role| match (&role.anchor, &role.knot) {
            (Some(a), _) => {
                let anchor = model.anchor(a).expect("validated");
                (
                    format!("{}_{}", snake(&role.role), key_column(anchor)),
                    "uuid".into(),
                    hub(anchor),
                    role,
                )
            }
            (None, Some(k)) => {
                let knot = model.knot(k).expect("validated");
                (
                    format!("{}_{}", snake(&role.role), snake(&knot.descriptor)),
                    pg_type(&knot.data_type).expect("validated"),
                    ref_table(model, k),
                    role,
                )
            }
            _ => unreachable!("validated"),
        })
        .collect()
}

/// Generates the Data Vault DDL of a valid model, and a loader script per
/// source: `(DDL, [(source name, loader)])`.
pub fn generate(
    model: &Model,
    source_name: &str,
) -> Result<(String, Vec<(String, String)>), ModelError> {
    let keys = match model.datavault.hub_keys {
        HubKeys::V7From => "hub and link keys uuidv7_from(load time, business key, secret)",
        HubKeys::Uuidv7 => "hub and link keys from the server-wide uuidv7()",
    };
    let keys = format!(
        "{keys}: needs CREATE EXTENSION uuidforge SCHEMA {}",
        model.extension_schema
    );
    let mut ddl = Ddl::new(
        &model.schema,
        &model.extension_schema,
        &format!("Data Vault with UUIDv7 keys, generated by uuidforge model from {source_name}.\n{keys}. Apply with psql --single-transaction."),
    );
    let schema = ddl.q(&model.schema);
    ddl.push(format!("CREATE SCHEMA IF NOT EXISTS {schema}"));
    for knot in &model.knots {
        let table = ddl.t(&ref_table(model, &knot.mnemonic));
        ddl.comment(&format!(
            "Reference {} ({})",
            knot.descriptor, knot.mnemonic
        ));
        ddl.push(format!(
            "CREATE TABLE {table} (\n    value {} PRIMARY KEY\n)",
            pg_type(&knot.data_type).expect("validated")
        ));
        crate::knots::insert_values(&mut ddl, &table, "value", &knot.values);
    }
    for anchor in &model.anchors {
        let table = ddl.t(&hub(anchor));
        let key = ddl.q(&key_column(anchor));
        let bk = business_key(model, anchor);
        let mut lines = vec![format!("{key} uuid PRIMARY KEY")];
        for (column, sql_type, _) in &bk {
            lines.push(format!("{} {sql_type} NOT NULL", ddl.q(column)));
        }
        lines.push("load_ts timestamptz NOT NULL".into());
        lines.push("record_source text NOT NULL".into());
        let bk_columns: Vec<String> = bk.iter().map(|(c, _, _)| ddl.q(c)).collect();
        lines.push(format!("UNIQUE ({})", bk_columns.join(", ")));
        ddl.comment(&format!("Hub {} ({})", anchor.descriptor, anchor.mnemonic));
        ddl.push(format!(
            "CREATE TABLE {table} (\n    {}\n)",
            lines.join(",\n    ")
        ));
    }
    let sats = satellites(model);
    for sat in &sats {
        let table = ddl.t(&sat.table());
        let (hub_table, key) = (ddl.t(&hub(sat.anchor)), ddl.q(&key_column(sat.anchor)));
        let mut lines = vec![
            format!("{key} uuid NOT NULL REFERENCES {hub_table} ({key})"),
            "load_ts timestamptz NOT NULL".into(),
            "hash_diff bytea NOT NULL".into(),
            "record_source text NOT NULL".into(),
        ];
        for a in &sat.attributes {
            let reference = match &a.knot {
                Some(k) => format!(" REFERENCES {} (value)", ddl.t(&ref_table(model, k))),
                None => String::new(),
            };
            lines.push(format!(
                "{} {}{reference}",
                ddl.q(&snake(&a.descriptor)),
                attribute_type(model, a)
            ));
        }
        lines.push(format!("PRIMARY KEY ({key}, load_ts)"));
        ddl.comment(&format!(
            "Satellite of {}{}",
            sat.anchor.descriptor,
            sat.source
                .map(|s| format!(" from {}", s.name))
                .unwrap_or_default()
        ));
        ddl.push(format!(
            "CREATE TABLE {table} (\n    {}\n)",
            lines.join(",\n    ")
        ));
    }
    for tie in &model.ties {
        let name = format!("link_{}", tie_table(model, tie));
        let table = ddl.t(&name);
        let columns = link_columns(model, tie);
        let mut lines = vec!["link_key uuid PRIMARY KEY".to_string()];
        for (column, sql_type, target, role) in &columns {
            let target_column = if role.anchor.is_some() {
                ddl.q(&key_column(
                    model
                        .anchor(role.anchor.as_deref().expect("anchor"))
                        .expect("validated"),
                ))
            } else {
                "value".into()
            };
            lines.push(format!(
                "{} {sql_type} NOT NULL REFERENCES {} ({target_column})",
                ddl.q(column),
                ddl.t(target)
            ));
        }
        lines.push("load_ts timestamptz NOT NULL".into());
        lines.push("record_source text NOT NULL".into());
        let all: Vec<String> = columns.iter().map(|(c, ..)| ddl.q(c)).collect();
        lines.push(format!("UNIQUE ({})", all.join(", ")));
        ddl.comment(&format!("Link {}", tie.name()));
        ddl.push(format!(
            "CREATE TABLE {table} (\n    {}\n)",
            lines.join(",\n    ")
        ));
        if tie.historized {
            let eff = ddl.t(&format!("eff_{}", tie_table(model, tie)));
            ddl.push(format!(
                "CREATE TABLE {eff} (\n    link_key uuid NOT NULL REFERENCES {table} (link_key),\n    load_ts timestamptz NOT NULL,\n    record_source text NOT NULL,\n    ended boolean NOT NULL,\n    PRIMARY KEY (link_key, load_ts)\n)"
            ));
        }
    }
    for source in &model.sources {
        let table = ddl.t(&format!("stage_{}", source.name));
        let columns: Vec<String> = source
            .columns
            .iter()
            .map(|c| format!("{} text", ddl.q(c)))
            .collect();
        ddl.comment(&format!(
            "Staging for source {} (load with load_{}(load_time))",
            source.name, source.name
        ));
        ddl.push(format!(
            "CREATE TABLE {table} (\n    {}\n)",
            columns.join(",\n    ")
        ));
    }
    for anchor in &model.anchors {
        hub_queries(&mut ddl, model, anchor, &sats);
    }
    for tie in &model.ties {
        link_queries(&mut ddl, model, tie);
    }
    let ddl = ddl.finish()?;
    let mut loaders = Vec::new();
    for source in &model.sources {
        loaders.push((
            source.name.clone(),
            loader(model, source, &sats, source_name)?,
        ));
    }
    Ok((ddl, loaders))
}

/// `ANCHOR_at(ts)`: each hub row loaded by `ts` with its satellites'
/// values then (an attribute several sources fill takes the value loaded
/// last); view `ANCHOR_latest`.
fn hub_queries(ddl: &mut Ddl, model: &Model, anchor: &Anchor, sats: &[Satellite<'_>]) {
    let base = snake(&anchor.descriptor);
    let (hub_table, key) = (ddl.t(&hub(anchor)), ddl.q(&key_column(anchor)));
    let mut columns = vec![(key.clone(), "uuid".to_string())];
    let mut select = vec![format!("h.{key}")];
    for (column, sql_type, _) in business_key(model, anchor) {
        let c = ddl.q(&column);
        columns.push((c.clone(), sql_type));
        select.push(format!("h.{c}"));
    }
    let mut joins = Vec::new();
    let mine: Vec<(usize, &Satellite<'_>)> = sats
        .iter()
        .filter(|s| s.anchor.mnemonic == anchor.mnemonic)
        .enumerate()
        .collect();
    for (i, sat) in &mine {
        let t = ddl.t(&sat.table());
        let names: Vec<String> = sat
            .attributes
            .iter()
            .map(|a| format!("x.{}", ddl.q(&snake(&a.descriptor))))
            .collect();
        joins.push(format!(
            "LEFT JOIN LATERAL (\n    SELECT x.load_ts, {} FROM {t} AS x\n    WHERE x.{key} = h.{key} AND x.load_ts <= ts\n    ORDER BY x.load_ts DESC LIMIT 1\n) AS s{i} ON true",
            names.join(", ")
        ));
    }
    for attribute in anchor
        .attributes
        .iter()
        .filter(|a| !anchor.business_key.contains(&a.mnemonic))
    {
        let c = ddl.q(&snake(&attribute.descriptor));
        let from: Vec<usize> = mine
            .iter()
            .filter(|(_, s)| {
                s.attributes
                    .iter()
                    .any(|a| a.mnemonic == attribute.mnemonic)
            })
            .map(|(i, _)| *i)
            .collect();
        let expression = match from[..] {
            [] => continue,
            [one] => format!("s{one}.{c}"),
            _ => {
                let pairs: Vec<String> = from
                    .iter()
                    .map(|i| format!("(s{i}.{c}, s{i}.load_ts)"))
                    .collect();
                format!("(SELECT v.value FROM (VALUES {}) AS v (value, load_ts) WHERE v.load_ts IS NOT NULL ORDER BY v.load_ts DESC LIMIT 1) AS {c}", pairs.join(", "))
            }
        };
        columns.push((c, attribute_type(model, attribute)));
        select.push(expression);
    }
    let at = ddl.t(&format!("{base}_at"));
    let latest = ddl.t(&format!("{base}_latest"));
    let body = format!(
        "SELECT {}\nFROM {hub_table} AS h\n{}\nWHERE h.load_ts <= ts",
        select.join(",\n       "),
        joins.join("\n")
    );
    ddl.comment(&format!(
        "{}: hub and satellites at a load time, and the latest",
        anchor.descriptor
    ));
    ddl.push(table_function(&at, "ts timestamptz", &columns, &body));
    ddl.push(format!(
        "CREATE VIEW {latest} AS SELECT * FROM {at}('infinity')"
    ));
}

/// `link_…_at(ts)`: the links in effect at a load time (for a historized
/// tie, those whose latest effectivity row by then has not ended).
fn link_queries(ddl: &mut Ddl, model: &Model, tie: &Tie) {
    let name = tie_table(model, tie);
    let table = ddl.t(&format!("link_{name}"));
    let columns_info = link_columns(model, tie);
    let mut columns = vec![("link_key".to_string(), "uuid".to_string())];
    for (column, sql_type, ..) in &columns_info {
        columns.push((ddl.q(column), sql_type.clone()));
    }
    columns.push(("load_ts".into(), "timestamptz".into()));
    let select: Vec<String> = columns.iter().map(|(c, _)| format!("l.{c}")).collect();
    let body = if tie.historized {
        let eff = ddl.t(&format!("eff_{name}"));
        format!(
            "SELECT {}\nFROM {table} AS l\nWHERE (SELECT NOT e.ended FROM {eff} AS e WHERE e.link_key = l.link_key AND e.load_ts <= ts ORDER BY e.load_ts DESC LIMIT 1)",
            select.join(", ")
        )
    } else {
        format!(
            "SELECT {}\nFROM {table} AS l\nWHERE l.load_ts <= ts",
            select.join(", ")
        )
    };
    let at = ddl.t(&format!("link_{name}_at"));
    ddl.push(table_function(&at, "ts timestamptz", &columns, &body));
}

/// The key expression for a hub or link row.
fn key_expression(model: &Model, what: &str, parts: &[String]) -> String {
    let ext = uuidforge_ident::quote_ident(&model.extension_schema);
    match model.datavault.hub_keys {
        HubKeys::Uuidv7 => format!("{ext}.uuidv7()"),
        HubKeys::V7From => format!(
            "{ext}.uuidv7_from(load_time, concat_ws('|', {}, {}), secret)",
            uuidforge_ident::quote_literal(what),
            parts.join(", ")
        ),
    }
}

/// Conditions joining a staging row to the hub row of a mention.
fn hub_match(
    ddl: &mut Ddl,
    model: &Model,
    anchor: &Anchor,
    mention: &SourceAnchor,
    hub_alias: &str,
    row: &str,
) -> Vec<String> {
    business_key(model, anchor)
        .into_iter()
        .map(|(column, sql_type, attribute)| {
            let staged = match &attribute {
                Some(m) => &mention.attributes[m],
                None => mention.key.as_ref().expect("validated"),
            };
            format!(
                "{hub_alias}.{} = {row}.{}::{sql_type}",
                ddl.q(&column),
                ddl.q(staged)
            )
        })
        .collect()
}

fn loader(
    model: &Model,
    source: &Source,
    sats: &[Satellite<'_>],
    source_name: &str,
) -> Result<String, ModelError> {
    let mut ddl = Ddl::new(
        &model.schema,
        &model.extension_schema,
        &format!("Loader of source {}: SELECT load_{}(load_time) after filling stage_{}.\nGenerated by uuidforge model from {source_name}.", source.name, source.name, source.name),
    );
    let stage = ddl.t(&format!("stage_{}", source.name));
    let record_source = ddl.lit(&source.name);
    let function_name = format!("load_{}", source.name);
    let mut body: Vec<String> = Vec::new();
    if model.datavault.hub_keys == HubKeys::V7From {
        body.push(format!(
            "IF coalesce(current_setting('uuidforge.hub_key_secret', true), '') !~ '^[0-9a-fA-F]{{64}}$' THEN\n    RAISE EXCEPTION '{function_name}: set uuidforge.hub_key_secret to 64 hex digits (the secret of deterministic hub keys)' USING ERRCODE = 'invalid_parameter_value';\nEND IF;\nsecret := decode(current_setting('uuidforge.hub_key_secret'), 'hex');"
        ));
    }
    // Reference values first, then hubs, satellites, links, effectivity.
    for knot in &model.knots {
        let mut staged = Vec::new();
        for mention in &source.anchors {
            let anchor = model.anchor(&mention.anchor).expect("validated");
            for a in anchor
                .attributes
                .iter()
                .filter(|a| a.knot.as_deref() == Some(knot.mnemonic.as_str()))
            {
                if let Some(c) = mention.attributes.get(&a.mnemonic) {
                    staged.push(c.clone());
                }
            }
        }
        for tie_mention in &source.ties {
            let tie = model.tie(&tie_mention.tie).expect("validated");
            for role in tie
                .roles
                .iter()
                .filter(|r| r.knot.as_deref() == Some(knot.mnemonic.as_str()))
            {
                staged.push(tie_mention.roles[&role.role].clone());
            }
        }
        if staged.is_empty() {
            continue;
        }
        let table = ddl.t(&ref_table(model, &knot.mnemonic));
        let sql_type = pg_type(&knot.data_type).expect("validated");
        let selects: Vec<String> = staged
            .iter()
            .map(|c| {
                format!(
                    "SELECT s.{c}::{sql_type} FROM {stage} AS s WHERE s.{c} IS NOT NULL",
                    c = ddl.q(c)
                )
            })
            .collect();
        body.push(format!(
            "INSERT INTO {table} (value)\n{}\nON CONFLICT DO NOTHING;",
            selects.join("\nUNION\n")
        ));
    }
    for mention in &source.anchors {
        let anchor = model.anchor(&mention.anchor).expect("validated");
        let table = ddl.t(&hub(anchor));
        let key = ddl.q(&key_column(anchor));
        let bk = business_key(model, anchor);
        let mut targets = vec![key.clone()];
        let mut picks = Vec::new();
        let mut not_null = Vec::new();
        let mut texts = Vec::new();
        for (column, sql_type, attribute) in &bk {
            let staged = match attribute {
                Some(m) => mention.attributes[m].clone(),
                None => mention.key.clone().expect("validated"),
            };
            let (c, s) = (ddl.q(column), ddl.q(&staged));
            targets.push(c.clone());
            picks.push(format!("s.{s}::{sql_type} AS {c}"));
            not_null.push(format!("s.{s} IS NOT NULL"));
            texts.push(format!("b.{c}::text"));
        }
        let key_expr = key_expression(model, &hub(anchor), &texts);
        let bk_names: Vec<String> = bk.iter().map(|(c, ..)| ddl.q(c)).collect();
        body.push(format!(
            "INSERT INTO {table} ({}, load_ts, record_source)\nSELECT {key_expr}, {}, load_time, {record_source}\nFROM (SELECT DISTINCT {} FROM {stage} AS s WHERE {}) AS b\nON CONFLICT ({}) DO NOTHING;",
            targets.join(", "),
            bk_names.iter().map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", "),
            picks.join(", "),
            not_null.join(" AND "),
            bk_names.join(", ")
        ));
    }
    for sat in sats
        .iter()
        .filter(|s| s.source.is_some_and(|s| s.name == source.name))
    {
        for mention in source
            .anchors
            .iter()
            .filter(|m| m.anchor == sat.anchor.mnemonic)
        {
            let table = ddl.t(&sat.table());
            let (hub_table, key) = (ddl.t(&hub(sat.anchor)), ddl.q(&key_column(sat.anchor)));
            let matches = hub_match(&mut ddl, model, sat.anchor, mention, "h", "s");
            let mut columns = Vec::new();
            let mut values = Vec::new();
            for a in sat
                .attributes
                .iter()
                .filter(|a| mention.attributes.contains_key(&a.mnemonic))
            {
                let c = ddl.q(&snake(&a.descriptor));
                values.push(format!(
                    "s.{}::{} AS {c}",
                    ddl.q(&mention.attributes[&a.mnemonic]),
                    attribute_type(model, a)
                ));
                columns.push(c);
            }
            let hashed: Vec<String> = columns
                .iter()
                .map(|c| format!("coalesce(n.{c}::text, '\\N')"))
                .collect();
            let row_columns: Vec<String> = columns.iter().map(|c| format!("n.{c}")).collect();
            body.push(format!(
                "INSERT INTO {table} ({key}, load_ts, hash_diff, record_source, {cols})\nSELECT n.{key}, load_time, n.hash_diff, {record_source}, {row_cols}\nFROM (\n    SELECT d.*, sha256(convert_to(concat_ws('|', {hashed}), 'UTF8')) AS hash_diff\n    FROM (SELECT DISTINCT ON (h.{key}) h.{key}, {values}\n          FROM {stage} AS s JOIN {hub_table} AS h ON {matches}\n          ORDER BY h.{key}) AS d\n) AS n\nWHERE n.hash_diff IS DISTINCT FROM (\n    SELECT x.hash_diff FROM {table} AS x WHERE x.{key} = n.{key} AND x.load_ts < load_time\n    ORDER BY x.load_ts DESC LIMIT 1)\nON CONFLICT DO NOTHING;",
                cols = columns.join(", "),
                row_cols = row_columns.join(", "),
                hashed = hashed.iter().map(|h| h.replace("n.", "d.")).collect::<Vec<_>>().join(", "),
                values = values.join(", "),
                matches = matches.join(" AND "),
            ));
        }
    }
    for tie_mention in &source.ties {
        let tie = model.tie(&tie_mention.tie).expect("validated");
        let name = tie_table(model, tie);
        let table = ddl.t(&format!("link_{name}"));
        let columns = link_columns(model, tie);
        let mut targets = vec!["link_key".to_string()];
        let mut picks = Vec::new();
        let mut joins = Vec::new();
        let mut not_null = Vec::new();
        for (i, (column, sql_type, _, role)) in columns.iter().enumerate() {
            let c = ddl.q(column);
            targets.push(c.clone());
            let mapped = &tie_mention.roles[&role.role];
            if let Some(a) = &role.anchor {
                let anchor = model.anchor(a).expect("validated");
                let mention = source
                    .anchors
                    .iter()
                    .find(|m| m.name() == mapped)
                    .expect("validated");
                let hub_table = ddl.t(&hub(anchor));
                let key = ddl.q(&key_column(anchor));
                let alias = format!("h{i}");
                let matches = hub_match(&mut ddl, model, anchor, mention, &alias, "s");
                joins.push(format!(
                    "JOIN {hub_table} AS {alias} ON {}",
                    matches.join(" AND ")
                ));
                picks.push(format!("{alias}.{key} AS {c}"));
            } else {
                let s = ddl.q(mapped);
                picks.push(format!("s.{s}::{sql_type} AS {c}"));
                not_null.push(format!("s.{s} IS NOT NULL"));
            }
        }
        let texts: Vec<String> = columns
            .iter()
            .map(|(c, ..)| format!("b.{}::text", ddl.q(c)))
            .collect();
        let key_expr = key_expression(model, &format!("link_{name}"), &texts);
        let role_columns: Vec<String> = columns.iter().map(|(c, ..)| ddl.q(c)).collect();
        let where_clause = if not_null.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", not_null.join(" AND "))
        };
        let resolved = format!(
            "SELECT DISTINCT {} FROM {stage} AS s {}{where_clause}",
            picks.join(", "),
            joins.join(" ")
        );
        body.push(format!(
            "INSERT INTO {table} ({}, load_ts, record_source)\nSELECT {key_expr}, {}, load_time, {record_source}\nFROM ({resolved}) AS b\nON CONFLICT ({}) DO NOTHING;",
            targets.join(", "),
            role_columns.iter().map(|c| format!("b.{c}")).collect::<Vec<_>>().join(", "),
            role_columns.join(", ")
        ));
        if tie.historized {
            // Links of this load start (unless in effect); others with the
            // same driving key that are in effect end.
            let eff = ddl.t(&format!("eff_{name}"));
            let driving: Vec<String> = tie
                .key_roles()
                .into_iter()
                .map(|r| {
                    ddl.q(&columns
                        .iter()
                        .find(|(_, _, _, x)| x.role == r.role)
                        .expect("a role")
                        .0)
                })
                .collect();
            let same_driving: Vec<String> =
                driving.iter().map(|c| format!("o.{c} = l.{c}")).collect();
            let loaded_match: Vec<String> = role_columns
                .iter()
                .map(|c| format!("l.{c} = b.{c}"))
                .collect();
            body.push(format!(
                "CREATE TEMPORARY TABLE loaded_links ON COMMIT DROP AS\nSELECT l.* FROM {table} AS l JOIN ({resolved}) AS b ON {};",
                loaded_match.join(" AND ")
            ));
            let in_effect = |alias: &str| {
                format!("coalesce((SELECT NOT e.ended FROM {eff} AS e WHERE e.link_key = {alias}.link_key ORDER BY e.load_ts DESC LIMIT 1), false)")
            };
            body.push(format!(
                "INSERT INTO {eff} (link_key, load_ts, record_source, ended)\nSELECT l.link_key, load_time, {record_source}, false FROM loaded_links AS l\nWHERE NOT {};",
                in_effect("l")
            ));
            body.push(format!(
                "INSERT INTO {eff} (link_key, load_ts, record_source, ended)\nSELECT DISTINCT o.link_key, load_time, {record_source}, true\nFROM {table} AS o JOIN loaded_links AS l ON {}\nWHERE o.link_key NOT IN (SELECT link_key FROM loaded_links) AND {};",
                same_driving.join(" AND "),
                in_effect("o")
            ));
            body.push("DROP TABLE loaded_links;".into());
        }
    }
    let function = ddl.t(&function_name);
    let declare = if model.datavault.hub_keys == HubKeys::V7From {
        "DECLARE\n    secret bytea;\n"
    } else {
        ""
    };
    let mut text = format!("CREATE FUNCTION {function}(load_time timestamptz DEFAULT now()) RETURNS void LANGUAGE plpgsql AS $body$\n{declare}BEGIN\n");
    for statement in &body {
        for line in statement.lines() {
            text.push_str("    ");
            text.push_str(line);
            text.push('\n');
        }
    }
    text.push_str("END\n$body$");
    ddl.push(text);
    ddl.finish()
}

//! The ER diagram of a discovery [`crate::discover::Report`]:
//! Mermaid, Graphviz DOT, and SVG (laid out by `layout-rs` from the DOT).
//! Declared foreign keys are solid lines; discovered ones dashed and
//! labelled with their score.

use crate::discover::{ColumnSet, Report};
use std::collections::BTreeSet;

fn tables(report: &Report) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for pk in &report.primary_keys {
        out.insert((pk.key.schema.clone(), pk.key.table.clone()));
    }
    for fk in &report.foreign_keys {
        out.insert((fk.from.schema.clone(), fk.from.table.clone()));
        out.insert((fk.to.schema.clone(), fk.to.table.clone()));
    }
    out
}

/// A Mermaid entity name: letters, digits and `_` only, so any table name
/// (quotes, spaces, markup) becomes a safe identifier; the real name is
/// the entity's alias.
fn mermaid_id(schema: &str, table: &str) -> String {
    let mut id = String::from("t_");
    for c in format!("{schema}.{table}").chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c);
        } else {
            id.push_str(&format!("_{:x}_", c as u32));
        }
    }
    id
}

fn mermaid_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '<' | '>' | '&' | '#' | ';' | '`' => '_',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// Mermaid `erDiagram`.
pub fn mermaid(report: &Report) -> String {
    let mut out = String::from("erDiagram\n");
    for (schema, table) in tables(report) {
        out.push_str(&format!(
            "    {}[\"{}\"] {{\n",
            mermaid_id(&schema, &table),
            mermaid_text(&format!("{schema}.{table}"))
        ));
        if let Some(pk) = report
            .primary_keys
            .iter()
            .find(|p| p.key.schema == schema && p.key.table == table)
        {
            for c in &pk.key.columns {
                out.push_str(&format!("        uuid {} PK\n", mermaid_word(c)));
            }
        }
        for fk in report
            .foreign_keys
            .iter()
            .filter(|f| f.from.schema == schema && f.from.table == table)
        {
            for c in &fk.from.columns {
                out.push_str(&format!("        uuid {} FK\n", mermaid_word(c)));
            }
        }
        out.push_str("    }\n");
    }
    for fk in &report.foreign_keys {
        let line = if fk.declared { "--" } else { ".." };
        let label = edge_label(fk.declared, fk.score, &fk.from);
        out.push_str(&format!(
            "    {} ||{line}o{{ {} : \"{}\"\n",
            mermaid_id(&fk.to.schema, &fk.to.table),
            mermaid_id(&fk.from.schema, &fk.from.table),
            mermaid_text(&label)
        ));
    }
    out
}

fn mermaid_word(name: &str) -> String {
    let w: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if w.is_empty() {
        "_".into()
    } else {
        w
    }
}

fn edge_label(declared: bool, score: f64, from: &ColumnSet) -> String {
    if declared {
        from.columns.join(", ")
    } else {
        format!("{} ({:.2})", from.columns.join(", "), score)
    }
}

fn dot_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Graphviz DOT.
pub fn dot(report: &Report) -> String {
    let mut out = String::from("digraph er {\n  rankdir=LR;\n  node [shape=box];\n");
    for (schema, table) in tables(report) {
        out.push_str(&format!(
            "  {} [label={}];\n",
            dot_string(&format!("{schema}.{table}")),
            dot_string(&format!("{schema}.{table}"))
        ));
    }
    for fk in &report.foreign_keys {
        out.push_str(&format!(
            "  {} -> {} [label={}{}];\n",
            dot_string(&format!("{}.{}", fk.from.schema, fk.from.table)),
            dot_string(&format!("{}.{}", fk.to.schema, fk.to.table)),
            dot_string(&edge_label(fk.declared, fk.score, &fk.from)),
            if fk.declared { "" } else { ", style=dashed" }
        ));
    }
    out.push_str("}\n");
    out
}

/// SVG, laid out from [`dot`]; text is escaped by the writer.
pub fn svg(report: &Report) -> Result<String, crate::error::DbError> {
    use layout::backends::svg::SVGWriter;
    use layout::gv::{DotParser, GraphBuilder};
    let source = dot(report);
    let graph = DotParser::new(&source)
        .process()
        .map_err(|e| crate::error::DbError::unreadable("diagram", e.to_string()))?;
    let mut builder = GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    let mut writer = SVGWriter::new();
    if visual.num_nodes() == 0 {
        return Ok(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"></svg>\n".into(),
        );
    }
    visual.do_it(false, false, false, &mut writer);
    Ok(writer.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::{ForeignKey, PrimaryKey};

    fn set(table: &str, column: &str) -> ColumnSet {
        ColumnSet {
            schema: "public".into(),
            table: table.into(),
            columns: vec![column.into()],
        }
    }

    fn report() -> Report {
        Report {
            primary_keys: vec![PrimaryKey {
                key: set("<img src=x onerror=alert(1)>", "id"),
                declared: false,
                rows: 3,
                other_primary_key: None,
                partitioned: false,
            }],
            foreign_keys: vec![
                ForeignKey {
                    from: set("orders", "customer_id"),
                    to: set("<img src=x onerror=alert(1)>", "id"),
                    score: 0.95,
                    declared: false,
                    inclusion: 1.0,
                    evidence: vec![],
                    from_partitioned: false,
                    older: 0,
                    matched: 0,
                },
                ForeignKey {
                    from: set("lines", "order\"id"),
                    to: set("orders", "id"),
                    score: 1.0,
                    declared: true,
                    inclusion: 1.0,
                    evidence: vec![],
                    from_partitioned: false,
                    older: 0,
                    matched: 0,
                },
            ],
        }
    }

    #[test]
    fn declared_solid_discovered_dashed_in_every_format() {
        let r = report();
        let m = mermaid(&r);
        assert!(m.contains("||..o{") && m.contains("||--o{"), "{m}");
        assert!(m.contains("(0.95)"));
        assert!(!m.contains("<img"), "{m}");
        let d = dot(&r);
        assert_eq!(d.matches("style=dashed").count(), 1, "{d}");
        assert!(d.contains("order\\\"id"), "{d}");
        let s = svg(&r).unwrap();
        assert!(s.contains("stroke-dasharray"), "no dashed line");
        assert!(!s.contains("<img"), "markup must be escaped");
        assert!(s.contains("&lt;img"), "the name is shown as text");
    }
}

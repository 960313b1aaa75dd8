//! The DDL of the fixtures, compared with the files in `tests/golden/`
//! (regenerate after a deliberate change with UUIDFORGE_ACCEPT_MODELS=1 and
//! read the diff), and the readers checked against each other.

use std::path::PathBuf;
use uuidforge_model::model::HubKeys;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

fn check(name: &str, text: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UUIDFORGE_ACCEPT_MODELS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (UUIDFORGE_ACCEPT_MODELS=1 writes it)",
            path.display()
        )
    });
    assert!(expected == text, "{name} differs from the golden file; UUIDFORGE_ACCEPT_MODELS=1 rewrites it, then read the diff");
}

#[test]
fn every_target_matches_its_golden_file() {
    let yaml = uuidforge_model::from_yaml(&fixture("festival.yaml")).unwrap();
    check(
        "festival.anchor.sql",
        &uuidforge_model::anchor::generate(&yaml, "festival.yaml").unwrap(),
    );
    check(
        "festival.bitemporal.sql",
        &uuidforge_model::bitemporal::generate(&yaml, "festival.yaml").unwrap(),
    );
    let (ddl, loaders) = uuidforge_model::datavault::generate(&yaml, "festival.yaml").unwrap();
    check("festival.datavault.sql", &ddl);
    assert_eq!(
        loaders.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["bookings", "mentoring"]
    );
    for (name, loader) in &loaders {
        check(&format!("festival.load_{name}.sql"), loader);
    }
    let xml = uuidforge_model::from_anchor_xml(&fixture("festival.xml")).unwrap();
    check(
        "festival-xml.anchor.sql",
        &uuidforge_model::anchor::generate(&xml, "festival.xml").unwrap(),
    );
}

#[test]
fn the_xml_and_yaml_fixtures_are_the_same_model() {
    let xml = uuidforge_model::from_anchor_xml(&fixture("festival.xml")).unwrap();
    let mut yaml = uuidforge_model::from_yaml(&fixture("festival.yaml")).unwrap();
    yaml.schema = xml.schema.clone();
    yaml.sources.clear();
    for knot in &mut yaml.knots {
        knot.values.clear();
    }
    assert_eq!(xml, yaml);
}

#[test]
fn fresh_hub_keys_use_uuidv7_and_no_secret() {
    let mut model = uuidforge_model::from_yaml(&fixture("festival.yaml")).unwrap();
    model.datavault.hub_keys = HubKeys::Uuidv7;
    let (ddl, loaders) = uuidforge_model::datavault::generate(&model, "festival.yaml").unwrap();
    assert!(!ddl.contains("uuidv7_from"));
    for (_, loader) in loaders {
        assert!(
            loader.contains("uuidv7()") && !loader.contains("hub_key_secret"),
            "{loader}"
        );
    }
}

#[test]
fn the_committed_json_schema_is_the_one_the_reader_uses() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/model.schema.json");
    let schema = uuidforge_model::json_schema();
    if std::env::var_os("UUIDFORGE_ACCEPT_MODELS").is_some() {
        std::fs::write(&path, &schema).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        schema,
        "UUIDFORGE_ACCEPT_MODELS=1 rewrites docs/model.schema.json"
    );
    // The YAML fixture, as JSON, is an instance of it: every key it uses is a property there.
    let value: serde_json::Value = serde_json::from_str(&schema).unwrap();
    for key in ["schema", "knots", "anchors", "ties", "sources", "datavault"] {
        assert!(value["properties"][key].is_object(), "{key}");
    }
}

#[test]
fn mistakes_name_where_they_are() {
    for (yaml, at, says) in [
        ("anchors: [{mnemonic: AC, descriptor: Actor, attributes: [{mnemonic: GEN, descriptor: Gender, knot: GEN}]}]", "anchors[0].attributes[0].knot", "'GEN' is not a knot"),
        ("anchors: [{mnemonic: AC, descriptor: Actor, attributes: [{mnemonic: A, descriptor: B}]}]", "anchors[0].attributes[0]", "exactly one of `type` and `knot`"),
        ("anchors: [{mnemonic: AC, descriptor: Actor, attributes: [{mnemonic: A, descriptor: B, type: varchar(9) x}]}]", "anchors[0].attributes[0].type", "expected a type"),
        ("anchors: [{mnemonic: AC, descriptor: Actor}, {mnemonic: AC, descriptor: Other}]", "anchors[1].mnemonic", "names two anchors"),
        ("anchors: [{mnemonic: AC, descriptor: 'Act or'}]", "anchors[0].descriptor", "is not a name"),
        ("anchors: [{mnemonic: AC, descriptor: Actor}]\nties: [{roles: [{role: a, anchor: AC}, {role: b, anchor: XX}]}]", "ties[0].roles[1].anchor", "'XX' is not an anchor"),
        ("anchors: [{mnemonic: AC, descriptor: Actor, business_key: [NAM], attributes: [{mnemonic: NAM, descriptor: Name, type: text, historized: true}]}]", "anchors[0].business_key[0]", "historized"),
        ("anchors: [{mnemonic: AC, descriptor: Actor}]\nsources: [{name: s, columns: [a], anchors: [{anchor: AC}]}]", "sources[0].anchors[0].key", "name the staging column"),
        ("anchors: [{mnemonic: AC, descriptor: Actor}]\nsources: [{name: s, columns: [a], anchors: [{anchor: AC, key: b}]}]", "sources[0].anchors[0].key", "'b' is not a column"),
        ("anchorz: []", "", "anchorz"),
    ] {
        let e = uuidforge_model::from_yaml(yaml).unwrap_err().to_string();
        assert!(e.contains(at) && e.contains(says), "{yaml}: {e}");
    }
}

#[test]
fn anchor_xml_errors_have_a_line_and_column() {
    let e = uuidforge_model::from_anchor_xml("<schema>\n  <anchor mnemonic=\"AC\"/>\n</schema>")
        .unwrap_err();
    assert!(matches!(e, uuidforge_model::ReadError::Xml(_)), "{e}");
    let e = e.to_string();
    assert!(e.starts_with("2:3: <anchor> has no descriptor"), "{e}");
    let e = uuidforge_model::from_anchor_xml("<schema>\n  <knot></schema>")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("2:"), "{e}");
    let e = uuidforge_model::from_anchor_xml("<model/>")
        .unwrap_err()
        .to_string();
    assert!(e.contains("<schema>"), "{e}");
}

#[test]
fn names_postgresql_would_truncate_are_refused() {
    let long = "A".repeat(40);
    let yaml = format!("anchors: [{{mnemonic: AC, descriptor: {long}, attributes: [{{mnemonic: NAM, descriptor: {long}, type: text}}]}}]");
    let model = uuidforge_model::from_yaml(&yaml).unwrap();
    let e = uuidforge_model::anchor::generate(&model, "x").unwrap_err();
    assert!(e.to_string().contains("PostgreSQL keeps 63"), "{e}");
}

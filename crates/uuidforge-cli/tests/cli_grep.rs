//! `uuidforge grep` (D12) on real files, standard input and a real
//! database: formats, places, values, versions and times, outputs and
//! exit codes.

mod common;

use common::{admin_sql, fresh_database, json_lines, scratch, url, uuidforge};
use std::path::Path;

const ORDER: &str = "0190f5a1-6b2c-7d3e-8f40-123456789abc";
const ITEM: &str = "0190f5a1-6b2c-7d3e-8f40-abcdef012345";
const CUSTOMER: &str = "0190f5a1-6b2c-7d3e-8f40-0000000000c1";
const V4: &str = "9b2e5c1a-3d4f-4a6b-8c7d-0e1f2a3b4c5d";

/// A tree of documents, an ignored file, a hidden one and a binary one.
fn tree(tag: &str) -> common::Scratch {
    let dir = scratch("grep", tag);
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "orders.ndjson",
        &format!(
            "{{\"order\": {{\"id\": \"{ORDER}\", \"items\": [{{\"id\": \"{ITEM}\"}}]}}, \"customer\": \"{CUSTOMER}\"}}\n\
             {{\"order\": {{\"id\": \"{V4}\", \"items\": []}}}}\n\
             {{\"ref\": \"https://shop.example/orders/{}\", \"n\": 1}}\n",
            ORDER.to_uppercase()
        ),
    );
    write(
        "doc.json",
        &format!("{{\n  \"orders\": [\n    {{\"id\": \"{ORDER}\",\n     \"lines\": [{{\"item\": \"{}\"}}]}}\n  ]\n}}\n", ITEM.replace('-', "")),
    );
    write(
        "page.html",
        &format!(
            "<!DOCTYPE html><html><body><p>Order <a href=\"https://shop.example/orders/{ORDER}\">open</a>\n<p>Customer {CUSTOMER}<br><img src=/c/{V4}.png>\n<script>if (a<b) {{ load('{ITEM}') }}</script></body></html>\n"
        ),
    );
    write(
        "feed.xml",
        &format!("<?xml version=\"1.0\"?>\n<feed><entry id=\"{ORDER}\"><customer>{CUSTOMER}</customer></entry><entry id=\"{V4}\"/></feed>\n"),
    );
    write(
        "table.csv",
        &format!(
            "id,customer,note\n{ORDER},{CUSTOMER},\"first, with {V4}\"\n{V4},{CUSTOMER},plain\n"
        ),
    );
    write(
        "notes.txt",
        &format!(
            "nothing here\nthe order {} in Base32\n",
            uuidforge::base32::encode(&ORDER.parse().unwrap()).as_str()
        ),
    );
    write(".gitignore", "ignored.txt\n");
    write("ignored.txt", ORDER);
    write(".hidden/secret.txt", ORDER);
    std::fs::write(
        dir.join("blob.bin"),
        [b"\0\0".as_slice(), ORDER.as_bytes()].concat(),
    )
    .unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = uuidforge()
        .current_dir(dir)
        .arg("grep")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[test]
fn files_with_a_value_in_any_spelling_skipping_ignored_hidden_and_binary() {
    let dir = tree("list");
    let (code, out, err) = run(&dir, &["-l", "-e", ORDER, "."]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        lines(&out),
        [
            "./doc.json",
            "./feed.xml",
            "./notes.txt",
            "./orders.ndjson",
            "./page.html",
            "./table.csv"
        ]
    );
    let (code, out, _) = run(&dir, &["-l", "--no-ignore", "--hidden", "-e", ORDER, "."]);
    assert_eq!(code, 0);
    assert!(
        out.contains("./ignored.txt")
            && out.contains("./.hidden/secret.txt")
            && !out.contains("blob.bin"),
        "{out}"
    );
    let (code, _, err) = run(&dir, &["-e", ORDER, "blob.bin"]);
    assert_eq!(code, 1);
    assert!(err.contains("binary file skipped"), "{err}");
}

#[test]
fn json_paths_report_line_column_and_path() {
    let dir = tree("jsonpath");
    let (code, out, err) = run(
        &dir,
        &[
            "--json",
            "--json-path",
            "$..items[*].id",
            "orders.ndjson",
            "doc.json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let hits = json_lines(out.as_bytes());
    assert_eq!(hits.len(), 1, "{out}");
    assert_eq!(hits[0]["path"], "$.order.items[0].id");
    assert_eq!(hits[0]["uuid"], ITEM);
    assert_eq!(hits[0]["version"], 7);
    assert!(
        hits[0]["time"].as_str().unwrap().starts_with("2024-"),
        "{}",
        hits[0]
    );
    // Every hit's line and column point at its text in the file.
    let (_, out, _) = run(
        &dir,
        &[
            "--json",
            "doc.json",
            "orders.ndjson",
            "table.csv",
            "feed.xml",
        ],
    );
    let hits = json_lines(out.as_bytes());
    assert!(hits.len() >= 12, "{out}");
    for hit in &hits {
        let text = std::fs::read_to_string(dir.join(hit["file"].as_str().unwrap())).unwrap();
        let line = text
            .lines()
            .nth(hit["line"].as_u64().unwrap() as usize - 1)
            .unwrap();
        let column = hit["column"].as_u64().unwrap() as usize - 1;
        assert!(
            line[column..].starts_with(hit["text"].as_str().unwrap()),
            "{hit}"
        );
        assert_eq!(
            hit["uuid"]
                .as_str()
                .unwrap()
                .parse::<uuid::Uuid>()
                .unwrap()
                .hyphenated()
                .to_string(),
            hit["uuid"]
        );
    }
    let paths: Vec<&str> = hits
        .iter()
        .filter(|h| h["file"] == "doc.json")
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["$.orders[0].id", "$.orders[0].lines[0].item"]);
    let xpaths: Vec<&str> = hits
        .iter()
        .filter(|h| h["file"] == "feed.xml")
        .map(|h| h["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        xpaths,
        [
            "/feed/entry/@id",
            "/feed/entry/customer/text()",
            "/feed/entry[2]/@id"
        ]
    );
    // A JSON path selects nothing in a CSV or text file.
    let (code, out, _) = run(&dir, &["--json-path", "$.id", "table.csv", "notes.txt"]);
    assert_eq!((code, out.as_str()), (1, ""));
}

#[test]
fn tags_attributes_urls_and_columns_restrict_the_place() {
    let dir = tree("places");
    let (_, out, _) = run(
        &dir,
        &["--json", "--tag", "a", "--attr", "href", "page.html"],
    );
    let hits = json_lines(out.as_bytes());
    assert_eq!(
        hits.iter()
            .map(|h| h["uuid"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [ORDER]
    );
    assert_eq!(hits[0]["path"], "/html/body/p/a/@href");
    let (_, out, _) = run(&dir, &["--json", "--tag", "script", "page.html"]);
    let hits = json_lines(out.as_bytes());
    assert_eq!(
        hits.iter()
            .map(|h| h["uuid"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [ITEM]
    );
    let (_, out, _) = run(&dir, &["--json", "--attr", "id", "feed.xml"]);
    assert_eq!(json_lines(out.as_bytes()).len(), 2);
    let (_, out, _) = run(
        &dir,
        &["--json", "--url", "https://shop.example/orders/*", "."],
    );
    let mut found: Vec<String> = json_lines(out.as_bytes())
        .iter()
        .map(|h| {
            format!(
                "{} {}",
                h["file"].as_str().unwrap(),
                h["uuid"].as_str().unwrap()
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            format!("./orders.ndjson {ORDER}"),
            format!("./page.html {ORDER}")
        ]
    );
    // CSV: the header, then the rows whose column holds a hit.
    let (code, out, _) = run(&dir, &["--csv-column", "note", "table.csv"]);
    assert_eq!(code, 0);
    assert_eq!(
        lines(&out),
        [
            "id,customer,note".to_string(),
            format!("{ORDER},{CUSTOMER},\"first, with {V4}\"")
        ]
    );
    let (code, _, err) = run(&dir, &["--csv-column", "price", "table.csv"]);
    assert_eq!(code, 2);
    assert!(err.contains("table.csv:1:1: --csv-column 'price': no such column (the header has id, customer, note)"), "{err}");
}

#[test]
fn versions_times_inversion_counts_and_values_files() {
    let dir = tree("filters");
    let (_, out, _) = run(&dir, &["--version", "4", "orders.ndjson"]);
    assert_eq!(lines(&out).len(), 1);
    assert!(out.contains(V4));
    let (_, out, _) = run(&dir, &["-v", "-e", ORDER, "orders.ndjson"]);
    assert_eq!(lines(&out).len(), 1);
    assert!(out.contains(V4));
    let (code, out, _) = run(
        &dir,
        &[
            "-c",
            "--since",
            "2024-07-01T00:00:00Z",
            "--until",
            "2024-08-01T00:00:00Z",
            "orders.ndjson",
            "notes.txt",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(lines(&out), ["orders.ndjson:2", "notes.txt:1"]);
    let (code, _, _) = run(&dir, &["--since", "2030-01-01T00:00:00Z", "orders.ndjson"]);
    assert_eq!(code, 1);
    std::fs::write(
        dir.join("ids"),
        format!("{{{}}}\n\nurn:uuid:{CUSTOMER}\n", ITEM.to_uppercase()),
    )
    .unwrap();
    let (code, out, _) = run(&dir, &["-l", "-f", "ids", "."]);
    assert_eq!(code, 0);
    assert!(
        out.contains("./doc.json") && out.contains("./table.csv") && !out.contains("notes.txt"),
        "{out}"
    );
    std::fs::write(dir.join("bad-ids"), format!("{ORDER}\nnot-a-uuid\n")).unwrap();
    let (code, out, err) = run(&dir, &["-f", "bad-ids", "."]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("line 2 of bad-ids: 'not-a-uuid' is not a UUID"),
        "{err}"
    );
}

#[test]
fn malformed_documents_are_reported_and_the_others_searched() {
    let dir = tree("malformed");
    std::fs::write(
        dir.join("broken.json"),
        format!("{{\"id\": \"{ORDER}\",\n  \"x\": [1, }}"),
    )
    .unwrap();
    std::fs::write(dir.join("broken.xml"), format!("<a id=\"{ORDER}\"><b></a>")).unwrap();
    std::fs::write(
        dir.join("lines.ndjson"),
        format!("{{\"id\": \"{ORDER}\"}}\n{{\"id\": \"{ORDER}\" oops}}\n"),
    )
    .unwrap();
    let (code, out, err) = run(
        &dir,
        &[
            "-e",
            ORDER,
            "broken.json",
            "broken.xml",
            "lines.ndjson",
            "feed.xml",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("broken.json:2:12: malformed JSON: expected a JSON value"),
        "{err}"
    );
    assert!(err.contains("broken.xml:1:"), "{err}");
    assert!(
        err.contains(
            "lines.ndjson:2:47: malformed JSON: expected ',' or '}' after an object member"
        ),
        "{err}"
    );
    assert!(
        out.contains(&format!("lines.ndjson:{{\"id\": \"{ORDER}\"}}")) && out.contains("<feed>"),
        "{out}"
    );
}

#[test]
fn standard_input_is_sniffed_and_bad_flags_exit_2() {
    let dir = tree("stdin");
    let out = uuidforge()
        .args(["grep", "--json-path", "$.customer", "--json"])
        .write_stdin(std::fs::read(dir.join("orders.ndjson")).unwrap())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let hits = json_lines(&out);
    assert_eq!((hits.len(), hits[0]["file"].as_str()), (1, Some("<stdin>")));
    for (args, says) in [
        (
            vec!["--json-path", "$[?(@.a)]", "."],
            "filters are not supported",
        ),
        (vec!["--url", "shop.example/*", "."], "with its scheme"),
        (vec!["--version", "9", "."], "9"),
        (vec!["--format", "yaml", "."], "expected one of json"),
        (
            vec![
                "--since",
                "2030-01-01T00:00:00Z",
                "--until",
                "2020-01-01T00:00:00Z",
                ".",
            ],
            "is not before",
        ),
    ] {
        let (code, _, err) = run(&dir, &args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn database_rows_through_find_and_as_json_documents() {
    let db = fresh_database(
        "grep_db",
        &format!(
            "CREATE TABLE orders (id uuid PRIMARY KEY, customer uuid, payload jsonb, note text);
             INSERT INTO orders VALUES
               ('{ORDER}', '{CUSTOMER}', '{{\"items\": [{{\"id\": \"{ITEM}\"}}], \"link\": \"https://shop.example/orders/{ORDER}\"}}', 'first'),
               ('{V4}', '{CUSTOMER}', '{{\"items\": []}}', 'see {ITEM}');
             CREATE TABLE \"Odd \"\"Name\" (\"Ref Id\" uuid);
             INSERT INTO \"Odd \"\"Name\" VALUES ('{ITEM}');"
        ),
    );
    let dir = scratch("grep", "db");
    let u = url(&db);
    // With values: the explorer's find over every table.
    let (code, out, err) = run(&dir, &["--db", &u, "-e", ITEM]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("public.orders.payload $.items[0].id")
            && out.contains("public.orders.note")
            && out.contains("public.Odd \"Name.Ref Id"),
        "{out}"
    );
    let (_, out, _) = run(&dir, &["--db", &u, "-e", ITEM, "-l"]);
    assert_eq!(lines(&out), ["public.Odd \"Name", "public.orders"]);
    let (code, _, _) = run(
        &dir,
        &[
            "--db", &u, "-e", ITEM, "--table", "orders", "--column", "customer",
        ],
    );
    assert_eq!(code, 1);
    // Without values or with a place: one table's rows as JSON objects.
    let (code, out, err) = run(
        &dir,
        &[
            "--db",
            &u,
            "--table",
            "orders",
            "--json-path",
            "$.payload.items[*].id",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let hits = json_lines(out.as_bytes());
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (
            hits[0]["file"].as_str(),
            hits[0]["uuid"].as_str(),
            hits[0]["path"].as_str()
        ),
        (
            Some("public.orders"),
            Some(ITEM),
            Some("$.payload.items[0].id")
        )
    );
    let (_, out, _) = run(
        &dir,
        &[
            "--db",
            &u,
            "--table",
            "orders",
            "--column",
            "payload",
            "--url",
            "https://shop.example/orders/*",
        ],
    );
    let rows: Vec<serde_json::Value> = json_lines(out.as_bytes());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], ORDER);
    let (code, out, _) = run(
        &dir,
        &["--db", &u, "--table", "orders", "--version", "4", "-c"],
    );
    assert_eq!((code, out.trim()), (0, "1"));
    let (code, out, err) = run(
        &dir,
        &[
            "--db",
            &u,
            "--table",
            "\"Odd \"\"Name\"",
            "--column",
            "Ref Id",
            "--version",
            "7",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let hits = json_lines(out.as_bytes());
    assert_eq!(
        (
            hits.len(),
            hits[0]["file"].as_str(),
            hits[0]["path"].as_str()
        ),
        (1, Some("public.Odd \"Name"), Some("$['Ref Id']"))
    );
    let (code, _, err) = run(&dir, &["--db", &u, "--version", "7"]);
    assert_eq!(code, 2);
    assert!(err.contains("give --table"), "{err}");
    let (code, _, err) = run(&dir, &["--db", &u, "--table", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("--table nope"), "{err}");
    admin_sql(
        "postgres",
        &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"),
    );
}

#[test]
fn large_files_searched_in_parallel_parts_keep_order_and_line_numbers() {
    let dir = scratch("grep", "large");
    let mut text = String::new();
    let mut wanted = Vec::new();
    let mut line = 0;
    while text.len() < 20 << 20 {
        line += 1;
        let id = uuid::Uuid::from_u128(0x0190_f5a1_6b2c_7d3e_8f40_0000_0000_0000 | line as u128);
        if line % 997 == 0 {
            wanted.push(format!("{line}:{{\"n\": {line}, \"id\": \"{id}\"}}"));
        }
        text.push_str(&format!("{{\"n\": {line}, \"id\": \"{id}\"}}\n"));
    }
    std::fs::write(dir.join("big.ndjson"), &text).unwrap();
    let values: String = (1..=line)
        .filter(|n| n % 997 == 0)
        .map(|n| {
            format!(
                "{}\n",
                uuid::Uuid::from_u128(0x0190_f5a1_6b2c_7d3e_8f40_0000_0000_0000 | n as u128)
            )
        })
        .collect();
    std::fs::write(dir.join("ids"), values).unwrap();
    let (code, out, err) = run(
        &dir,
        &["-n", "-f", "ids", "--json-path", "$.id", "big.ndjson"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines(&out), wanted);
    let (_, out, _) = run(&dir, &["-c", "-v", "-f", "ids", "big.ndjson"]);
    assert_eq!(out.trim(), (line - wanted.len()).to_string());
}

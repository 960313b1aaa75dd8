//! The Database view's API over real HTTP on loopback against the real
//! PostgreSQL server (scripts/pg-setup.sh): routes only with a database,
//! the bearer token, the Content-Security-Policy on every page, requests
//! that cannot carry SQL, and the same answers as the CLI's planners.

mod common;

use common::{assert_error, config, start, LOCAL_DATABASE, TOKEN};
use serde_json::Value;
use tokio_postgres::NoTls;
use uuidforge_server::database::DatabaseAccess;
use uuidforge_server::error::StartError;
use uuidforge_server::Config;

/// A fresh database with a key, a column carrying it without an index, and
/// a table whose names are HTML.
async fn fixture(tag: &str) -> String {
    let name = format!("uf_server_{tag}_{}", std::process::id());
    let admin_url = |db: &str| format!("postgres://uuidforge_admin:uuidforge@127.0.0.1:5432/{db}");
    let (admin, conn) = tokio_postgres::connect(&admin_url("postgres"), NoTls)
        .await
        .unwrap_or_else(|e| {
            panic!("connect as the superuser role uuidforge_admin (password uuidforge) on 127.0.0.1:5432: {e} (scripts/pg-setup.sh makes it)")
        });
    tokio::spawn(conn);
    for statement in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name} OWNER uuidforge"),
    ] {
        admin.batch_execute(&statement).await.unwrap();
    }
    let (db, conn) = tokio_postgres::connect(&admin_url(&name), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    db.batch_execute(
        r#"SET ROLE uuidforge;
        CREATE TABLE customers (id uuid PRIMARY KEY, name text);
        CREATE TABLE orders (id uuid PRIMARY KEY, customer_id uuid);
        CREATE TABLE "<b>x</b>" ("<i>y</i>" jsonb, "<i>id</i>" uuid DEFAULT gen_random_uuid());
        INSERT INTO customers VALUES ('01890a5d-ac96-774b-bcce-b302099a8057', 'a');
        INSERT INTO orders VALUES ('01890a5d-ac97-7000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057');
        INSERT INTO "<b>x</b>" ("<i>y</i>") VALUES ('{"k": ["01890a5d-ac96-774b-bcce-b302099a8057"]}');"#,
    )
    .await
    .unwrap();
    format!("postgres://uuidforge:uuidforge@127.0.0.1:5432/{name}")
}

async fn get_ok(s: &common::Server, path: &str) -> Value {
    let r = s.client.get(s.url(path)).send().await.unwrap();
    assert_eq!(r.status(), 200, "{path}");
    r.json::<Value>().await.unwrap()
}

fn with_db(dsn: &str) -> Config {
    Config {
        database: Some(DatabaseAccess { dsn: dsn.into() }),
        ..config()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_database_there_are_no_database_routes() {
    let s = start(config()).await;
    for path in [
        "/api/v1/db",
        "/api/v1/db/columns",
        "/api/v1/db/find?value=x",
    ] {
        let r = s.client.get(s.url(path)).send().await.unwrap();
        assert_error(r, 404, "path").await;
    }
    let health: Value = s
        .client
        .get(s.url("/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["database"], false);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_carries_the_content_security_policy() {
    let s = start(with_db(LOCAL_DATABASE)).await;
    for path in [
        "/",
        "/db",
        "/static/db.js",
        "/static/demo.html",
        "/api/v1/db",
        "/no/such/page",
    ] {
        let r = s.client.get(s.url(path)).send().await.unwrap();
        let csp = r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(csp.starts_with("default-src 'self'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe"), "{path}: {csp}");
    }
    let page = s
        .client
        .get(s.url("/db"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let inline_script = regex::Regex::new(r"<script(\s[^>]*)?>\s*[^<\s]").unwrap();
    assert!(
        !inline_script.is_match(&page),
        "no inline script in the page"
    );
    assert!(!page.contains("style="), "no inline style in the page");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_guards_the_database_routes_only() {
    let dsn = fixture("token").await;
    let s = start(with_db(&dsn)).await;
    let get = |path: &str, token: Option<&str>| {
        let mut r = s.anonymous.get(s.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send()
    };
    let r = get("/api/v1/db/columns", None).await.unwrap();
    assert_eq!(
        r.headers()["www-authenticate"],
        "Bearer realm=\"uuidforge\""
    );
    assert_error(r, 401, "authorization").await;
    let wrong = format!("{TOKEN}x");
    assert_error(
        get("/api/v1/db/columns", Some(&wrong)).await.unwrap(),
        401,
        "authorization",
    )
    .await;
    assert_error(
        get("/api/v1/db", Some(&TOKEN[1..])).await.unwrap(),
        401,
        "authorization",
    )
    .await;
    let ok = get("/api/v1/db/columns", Some(TOKEN)).await.unwrap();
    assert_eq!(ok.status(), 200);
    // The rest of the API needs no token.
    assert_eq!(get("/api/v1/profiles", None).await.unwrap().status(), 200);
    assert_eq!(get("/db", None).await.unwrap().status(), 200);
    s.stop().await;
}

#[test]
fn every_server_has_a_token_of_16_characters_or_more() {
    let mut c = with_db(LOCAL_DATABASE);
    c.token = None;
    let e = c.check().unwrap_err();
    assert!(
        matches!(
            e,
            StartError::Missing {
                setting: "--token",
                ..
            }
        ),
        "{e}"
    );
    c.token = Some("short".into());
    let e = c.check().unwrap_err();
    assert!(
        matches!(
            &e,
            StartError::Invalid {
                setting: "--token",
                value: None,
                ..
            }
        ) && e.to_string().contains("at least 16"),
        "{e}"
    );
    c.token = Some(TOKEN.into());
    c.bind = "0.0.0.0:8080".parse().unwrap();
    c.check().unwrap();
    // A bad --db is named.
    let e = with_db("postgres://[::1").check().unwrap_err();
    assert!(
        matches!(
            e,
            StartError::Invalid {
                setting: "--db",
                ..
            }
        ),
        "{e}"
    );
    // The password and the token never show in logs.
    let shown = format!("{:?}", with_db(LOCAL_DATABASE));
    assert!(
        !shown.contains(":uuidforge@") && !shown.contains(TOKEN),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn columns_find_related_and_discover_answer_from_the_database() {
    let dsn = fixture("answers").await;
    let s = start(with_db(&dsn)).await;
    let about = get_ok(&s, "/api/v1/db").await;
    assert_eq!(about["user"], "uuidforge");
    assert_eq!(about["read_only"], true);

    let columns = get_ok(&s, "/api/v1/db/columns").await;
    let colour = |table: &str, column: &str| -> (String, String) {
        let c = columns["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["table"] == table && c["column"] == column)
            .unwrap_or_else(|| panic!("{table}.{column} in {columns}"));
        (
            c["colour_light"].as_str().unwrap().into(),
            c["colour_dark"].as_str().unwrap().into(),
        )
    };
    assert_eq!(
        colour("customers", "id"),
        ("#0043ce".into(), "#85b1ff".into())
    );
    assert_eq!(
        colour("orders", "customer_id"),
        ("#f34900".into(), "#ff9766".into())
    );
    assert_eq!(colour("<b>x</b>", "<i>y</i>").0, "#f34900");

    // Base32 spelling of the customer; found in all three places.
    let base32 = uuidforge::fmt::Format::Base32
        .to_text(&"01890a5d-ac96-774b-bcce-b302099a8057".parse().unwrap());
    let found = get_ok(&s, &format!("/api/v1/db/find?value={base32}")).await;
    let mut places: Vec<String> = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| format!("{}.{} {}", h["table"], h["column"], h["path"]))
        .collect();
    places.sort();
    assert_eq!(
        places,
        [
            r#""<b>x</b>"."<i>y</i>" "$.k[0]""#,
            r#""customers"."id" null"#,
            r#""orders"."customer_id" null"#
        ]
    );
    assert_eq!(found["truncated"], false);
    let quick = get_ok(
        &s,
        &format!("/api/v1/db/find?value={base32}&indexed_only=true"),
    )
    .await;
    assert_eq!(quick["summary"]["scans"], 0);
    assert_eq!(quick["hits"].as_array().unwrap().len(), 1);

    let related = get_ok(&s, "/api/v1/db/related?column=customers.id").await;
    let first = &related["related"][0];
    assert_eq!(
        (first["table"].as_str(), first["column"].as_str()),
        (Some("orders"), Some("customer_id"))
    );

    let report = get_ok(&s, "/api/v1/db/discover").await;
    assert_eq!(report["foreign_keys"][0]["from"]["table"], "orders");
    assert!(report["ddl"].as_str().unwrap().contains("NOT VALID"));
    let svg = s
        .client
        .get(s.url("/api/v1/db/discover?format=svg"))
        .send()
        .await
        .unwrap();
    assert_eq!(svg.headers()["content-type"], "image/svg+xml");
    let svg = svg.text().await.unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..40]
    );
    assert!(!svg.contains("<b>x</b>") && svg.contains("&lt;b&gt;x&lt;/b&gt;"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_name_things_and_never_carry_sql() {
    let dsn = fixture("nosql").await;
    let s = start(with_db(&dsn)).await;
    let value = "01890a5d-ac96-774b-bcce-b302099a8057";
    let attempts = [
        "/api/v1/db/related?column=customers.id%3B%20DROP%20TABLE%20customers".to_string(),
        "/api/v1/db/related?column=customers%22.%22id".into(),
        format!("/api/v1/db/find?value={value}&schema=public%27%3B%20DROP%20TABLE%20customers%3B--"),
        format!("/api/v1/db/find?value={value}&column=id%22%20FROM%20customers%3B%20DROP%20TABLE%20customers%3B--"),
        "/api/v1/db/columns?schema=%22%3B%20DROP%20TABLE%20customers%3B--".into(),
        "/api/v1/db/find?value=1%27%20OR%20%271%27%3D%271".into(),
        "/api/v1/db/columns?sql=SELECT%201".into(),
    ];
    for path in &attempts {
        let r = s.client.get(s.url(path)).send().await.unwrap();
        let status = r.status().as_u16();
        assert!(status == 200 || status == 400, "{path}: {status}");
        let body: Value = r.json().await.unwrap();
        if status == 200 {
            // A schema or column that does not exist: nothing searched.
            let empty = body["hits"]
                .as_array()
                .or(body["columns"].as_array())
                .unwrap();
            assert!(empty.is_empty(), "{path}: {body}");
        }
    }
    // Everything is still there.
    let found: Value = s
        .client
        .get(s.url(&format!("/api/v1/db/find?value={value}")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found["summary"]["hits"], 3, "{found}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn find_names_a_column_that_does_not_exist() {
    let dsn = fixture("nosuch").await;
    let s = start(with_db(&dsn)).await;
    let r = s
        .client
        .get(s.url("/api/v1/db/find?value=01890a5d-ac96-774b-bcce-b302099a8057&column=nosuch.col"))
        .send()
        .await
        .unwrap();
    let body = assert_error(r, 400, "column").await;
    assert!(
        body["error"]["value"]
            .as_str()
            .unwrap()
            .contains("nosuch.col"),
        "{body}"
    );
    s.stop().await;
}

/// A failure of the database is answered by what it was, with the JSON
/// error body naming the database (its password never): a server that
/// does not answer is 502, a privilege it refuses 403, a statement past
/// its time 504 - never a bare 502 for all of them.
#[tokio::test(flavor = "multi_thread")]
async fn database_failures_are_answered_by_kind_in_json() {
    let dsn = fixture("failures").await;
    let name = dsn.rsplit('/').next().unwrap().to_string();
    let admin_url = |db: &str| format!("postgres://uuidforge_admin:uuidforge@127.0.0.1:5432/{db}");
    let (admin, conn) = tokio_postgres::connect(&admin_url(&name), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    admin
        .batch_execute(&format!(
            "DO $$ BEGIN
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'uf_server_outsider') THEN
                 CREATE ROLE uf_server_outsider LOGIN PASSWORD 'outsider-secret';
               END IF;
             END $$;
             REVOKE CONNECT ON DATABASE {name} FROM PUBLIC;
             CREATE TABLE big AS SELECT g, gen_random_uuid()::text AS t FROM generate_series(1, 300000) g;
             ALTER TABLE big OWNER TO uuidforge;"
        ))
        .await
        .unwrap();
    let get = |s: &common::Server, path: &str| s.client.get(s.url(path)).send();

    // Nothing listens on the port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let s = start(with_db(&format!(
        "postgres://uuidforge:uuidforge@127.0.0.1:{port}/{name}"
    )))
    .await;
    let body = assert_error(
        get(&s, "/api/v1/db/columns").await.unwrap(),
        502,
        "database",
    )
    .await;
    assert!(!body.to_string().contains("uuidforge:uuidforge"), "{body}");
    s.stop().await;

    // A role the database refuses.
    let s = start(with_db(&format!(
        "postgres://uf_server_outsider:outsider-secret@127.0.0.1:5432/{name}"
    )))
    .await;
    let body = assert_error(
        get(&s, "/api/v1/db/columns").await.unwrap(),
        403,
        "database",
    )
    .await;
    assert!(
        body["error"]["value"].as_str().unwrap().contains("42501"),
        "{body}"
    );
    assert!(!body.to_string().contains("outsider-secret"), "{body}");
    s.stop().await;

    // Every statement stopped after a millisecond: the scan of 300 000
    // rows cannot finish.
    let s = start(with_db(&format!(
        "{dsn}?options=-c%20statement_timeout%3D1"
    )))
    .await;
    let body = assert_error(
        get(
            &s,
            "/api/v1/db/find?value=01890a5d-ac96-774b-bcce-b302099a8057",
        )
        .await
        .unwrap(),
        504,
        "database",
    )
    .await;
    assert!(
        body["error"]["value"].as_str().unwrap().contains("57014"),
        "{body}"
    );
    s.stop().await;
}

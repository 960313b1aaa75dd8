//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{ExitStatus, Stdio};

/// The built binary, isolated from the developer's settings.
pub fn uuidforge() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("uuidforge").unwrap();
    c.env_remove("UUIDFORGE_PROFILE")
        .env_remove("UUIDFORGE_FORMAT")
        .env("XDG_CONFIG_HOME", "/nonexistent-uuidforge-test");
    c
}

/// Runs the binary with `args` (feeding `stdin_line` many times if given),
/// reads the first `n` bytes of its output, then closes the pipe: returns
/// those bytes, the exit status and what it wrote on standard error.
pub fn read_then_close(
    args: &[&str],
    stdin_line: Option<&str>,
    n: usize,
) -> (Vec<u8>, ExitStatus, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .args(args)
        .stdin(if stdin_line.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let writer = stdin_line.map(|line| {
        let mut stdin = child.stdin.take().unwrap();
        let line = format!("{line}\n");
        std::thread::spawn(move || {
            for _ in 0..200_000 {
                if stdin.write_all(line.as_bytes()).is_err() {
                    break;
                }
            }
        })
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = vec![0u8; n];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    if let Some(w) = writer {
        w.join().unwrap();
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (first, status, err)
}

/// Standard output of a run that must succeed.
pub fn ok_stdout(args: &[&str]) -> Vec<u8> {
    uuidforge()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

/// The JSON objects of NDJSON output, one per line.
pub fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The port of the PostgreSQL server under test: 5432 (15), or
/// `UUIDFORGE_TEST_PGPORT` (scripts/test.sh sets 5418 for the run on 18).
pub fn port() -> String {
    std::env::var("UUIDFORGE_TEST_PGPORT").unwrap_or_else(|_| "5432".into())
}

/// The login role's URL for `db` (what the commands under test use).
pub fn url(db: &str) -> String {
    format!("postgres://uuidforge:uuidforge@127.0.0.1:{}/{db}", port())
}

/// An empty working directory `uf_KIND_TAG_PID` (backups and key files go
/// there), removed when it goes out of scope.
pub fn scratch(kind: &str, tag: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("uf_{kind}_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's working directory. Dropped by a test that passes, it is removed
/// (every run of the test command would otherwise leave its backups, dumps
/// and logs behind); dropped while the test panics, it stays, with what the
/// failed run left in it, and its path is printed.
pub struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for a look: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The superuser's URL for `db` (fixtures and checks only).
pub fn admin_url(db: &str) -> String {
    format!(
        "postgres://uuidforge_admin:uuidforge@127.0.0.1:{}/{db}",
        port()
    )
}

/// A fresh database `uf_cli_TAG_PID` owned by the login role `uuidforge`,
/// with `sql` run in it as that role; its name.
pub fn fresh_database(tag: &str, sql: &str) -> String {
    let name = format!("uf_cli_{tag}_{}", std::process::id());
    admin_sql(
        "postgres",
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    );
    admin_sql(
        "postgres",
        &format!("CREATE DATABASE {name} OWNER uuidforge"),
    );
    admin_sql(&name, &format!("SET ROLE uuidforge; {sql}"));
    name
}

/// Runs `sql` (one or more statements) in `db` as the superuser; the first
/// column of the last statement's first row as text ("" when none).
pub fn admin_sql(db: &str, sql: &str) -> String {
    sql_at_url(&admin_url(db), sql)
}

/// Runs `sql` in `db` as the superuser; the SQLSTATE and message if the
/// server refuses it.
pub fn try_admin_sql(db: &str, sql: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&admin_url(db), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client.batch_execute(sql).await.map_err(|e| {
            let d = e.as_db_error().unwrap();
            format!("{} {}", d.code().code(), d.message())
        })
    })
}

/// Runs `sql` over the connection `url` (a test role's, with its
/// password); the first column of the last statement's first row as text
/// ("" when none).
pub fn sql_at_url(url: &str, sql: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| {
                let at = url.rsplit('@').next().unwrap_or_default();
                panic!("connect as the superuser role uuidforge_admin (password uuidforge) to {at}: {e} (scripts/pg-setup.sh and scripts/fleet-setup.sh make it)")
            });
        tokio::spawn(conn);
        let messages = client.simple_query(sql).await.unwrap_or_else(|e| {
            let detail = e.as_db_error().map(|d| d.message().to_string());
            panic!("{sql}: {e} {detail:?}")
        });
        messages
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => {
                    Some(row.get(0).unwrap_or_default().to_string())
                }
                _ => None,
            })
            .next_back()
            .unwrap_or_default()
    })
}

/// Runs `uuidforge args` (in `dir`) while another session reads `table`
/// (a lock a backup shares and an `ALTER TABLE` or `LOCK TABLE` of a
/// change waits for), kills it with
/// SIGKILL once its transaction waits on that lock, lets the lock go and
/// waits until the orphaned backend has ended.
pub fn kill_while_waiting_on(db: &str, table: &str, dir: &std::path::Path, args: &[&str]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let holder = runtime.block_on(async {
        let (client, conn) = tokio_postgres::connect(&admin_url(db), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client
            .batch_execute(&format!("BEGIN; LOCK TABLE {table} IN ACCESS SHARE MODE"))
            .await
            .unwrap();
        client
    });
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("uuidforge"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let waiting = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND (query LIKE 'ALTER TABLE%{table}%' OR query LIKE 'LOCK TABLE%{table}%')"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while admin_sql(db, &waiting) != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "the change never waited on the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    runtime.block_on(async { holder.batch_execute("ROLLBACK").await.unwrap() });
    drop(holder);
    let busy = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND (query LIKE 'ALTER TABLE%' OR query LIKE 'UPDATE%') AND state <> 'idle'";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while admin_sql(db, busy) != "0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the killed change never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Customers with an identity key, a self-reference, references of every
/// kind (NOT NULL with an index, deferrable, ON DELETE SET NULL, part of a
/// primary key).
pub fn customers_schema(customers: u32) -> String {
    format!(
        r#"
CREATE TABLE customers (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text,
                        created_at timestamptz NOT NULL, parent_id bigint REFERENCES customers (id));
CREATE TABLE orders (id serial PRIMARY KEY,
                     customer_id bigint NOT NULL REFERENCES customers (id) ON DELETE CASCADE);
CREATE INDEX orders_customer_id_idx ON orders (customer_id);
CREATE TABLE referrals (id int PRIMARY KEY,
                        customer_id bigint REFERENCES customers (id) DEFERRABLE INITIALLY DEFERRED,
                        referred_by bigint REFERENCES customers (id) ON DELETE SET NULL ON UPDATE RESTRICT);
CREATE TABLE "Zeilen" ("Kunde" bigint REFERENCES customers (id), n int, PRIMARY KEY ("Kunde", n));
INSERT INTO customers (name, created_at)
  SELECT 'c' || g, timestamptz '2024-01-01' + g * interval '1 minute' FROM generate_series(1, {customers}) g;
UPDATE customers SET parent_id = id - 1 WHERE id % 3 = 0;
INSERT INTO orders (customer_id) SELECT 1 + (g * 37) % {customers} FROM generate_series(1, 3 * {customers}) g;
INSERT INTO referrals SELECT g, 1 + g % {customers}, CASE WHEN g % 2 = 0 THEN 1 + (g * 5) % {customers} END
  FROM generate_series(1, {customers} / 2) g;
INSERT INTO "Zeilen" SELECT 1 + g % {customers}, g FROM generate_series(1, {customers}) g;
"#
    )
}

/// People keyed by UUIDv7 (Ann, Ann B. and A. B. are one person), their
/// memberships (unique per group) and notes mentioning them in text,
/// JSON and arrays: the merge fixture.
pub const ANN: &str = "01890a5d-ac96-774b-bcce-b302099a8057";
pub const ANN_B: &str = "01900a5d-ac96-774b-bcce-b302099a8058";
pub const AB: &str = "01910a5d-ac96-774b-bcce-b302099a8059";
pub const BOB: &str = "01920a5d-ac96-774b-bcce-b302099a8060";

pub const PEOPLE_SCHEMA: &str = r#"
CREATE TABLE people (id uuid PRIMARY KEY, name text, email text UNIQUE);
CREATE TABLE memberships (person_id uuid NOT NULL REFERENCES people (id), group_name text, since date,
                          PRIMARY KEY (person_id, group_name));
CREATE TABLE "Notizen" (id serial PRIMARY KEY, "Person" uuid REFERENCES people (id) ON DELETE CASCADE,
                        body text, doc jsonb, tags uuid[]);
INSERT INTO people VALUES
 ('01890a5d-ac96-774b-bcce-b302099a8057', 'Ann', 'ann@example.com'),
 ('01900a5d-ac96-774b-bcce-b302099a8058', 'Ann B.', 'annb@example.com'),
 ('01910a5d-ac96-774b-bcce-b302099a8059', 'A. B.', NULL),
 ('01920a5d-ac96-774b-bcce-b302099a8060', 'Bob', 'bob@example.com');
INSERT INTO memberships VALUES
 ('01890a5d-ac96-774b-bcce-b302099a8057', 'chess', '2020-01-01'),
 ('01900a5d-ac96-774b-bcce-b302099a8058', 'chess', '2021-01-01'),
 ('01900a5d-ac96-774b-bcce-b302099a8058', 'go', '2021-02-01'),
 ('01910a5d-ac96-774b-bcce-b302099a8059', 'go', '2022-01-01'),
 ('01920a5d-ac96-774b-bcce-b302099a8060', 'go', '2022-01-01');
INSERT INTO "Notizen" ("Person", body, doc, tags) VALUES
 ('01900a5d-ac96-774b-bcce-b302099a8058', 'see also 01910A5D-AC96-774B-BCCE-B302099A8059',
  '{"who": "01910a5d-ac96-774b-bcce-b302099a8059", "n": 1}', ARRAY['01890a5d-ac96-774b-bcce-b302099a8057'::uuid]),
 ('01920a5d-ac96-774b-bcce-b302099a8060', 'bob', '{}', NULL);
CREATE TABLE blobs (id int PRIMARY KEY, raw bytea, meta jsonb);
INSERT INTO blobs VALUES (1, uuid_send('01900a5d-ac96-774b-bcce-b302099a8058'),
                          '{"01910a5d-ac96-774b-bcce-b302099a8059": {"seen": true}}');
"#;

/// Standard output and error of a run that must exit 2 (bad input),
/// fed `stdin`.
pub fn exit_2_with_stdin<I, S>(args: I, stdin: &str) -> (String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = uuidforge()
        .args(args)
        .write_stdin(stdin)
        .assert()
        .code(2)
        .get_output()
        .clone();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Standard error of a run that must exit 2 (bad input) and print nothing.
pub fn exit_2<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let (out, err) = exit_2_with_stdin(args, "");
    assert!(
        out.is_empty(),
        "nothing on standard output after bad input: {out}"
    );
    err
}

/// Stops a change at a statement of the test's choosing, with a real
/// server feature: an event trigger (`ddl_command_start`) that, for a
/// statement matching a pattern, either fails it (the tool stops there with
/// an error) or waits until the test lets it go (the tool is busy there,
/// holding its locks). Made by the superuser in `db`; dropped with it.
pub struct Hold {
    db: String,
    runtime: tokio::runtime::Runtime,
    /// The session holding the lock waiting statements wait for.
    holder: Option<tokio_postgres::Client>,
}

/// The advisory lock a waiting statement waits for.
const HOLD_LOCK: i64 = 4_242_424_242;

impl Hold {
    /// Installs the event trigger in `db` (nothing held yet).
    pub fn install(db: &str) -> Hold {
        admin_sql(
            db,
            &format!(
                "CREATE TABLE public.uf_hold (pattern text NOT NULL, wait boolean NOT NULL);
                 CREATE FUNCTION public.uf_hold() RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER SET lock_timeout = 0 AS $$
                 DECLARE h record;
                 BEGIN
                   FOR h IN SELECT * FROM public.uf_hold WHERE current_query() LIKE pattern LOOP
                     IF h.wait THEN
                       PERFORM pg_advisory_lock({HOLD_LOCK});
                       PERFORM pg_advisory_unlock({HOLD_LOCK});
                     ELSE
                       RAISE EXCEPTION 'held by the test at %', h.pattern;
                     END IF;
                   END LOOP;
                 END $$;
                 CREATE EVENT TRIGGER uf_hold ON ddl_command_start EXECUTE FUNCTION public.uf_hold();"
            ),
        );
        Hold {
            db: db.to_string(),
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            holder: None,
        }
    }

    /// A statement matching `pattern` (SQL LIKE) fails from now on.
    pub fn fail_at(&self, pattern: &str) {
        admin_sql(
            &self.db,
            &format!(
                "INSERT INTO public.uf_hold VALUES ('{}', false)",
                pattern.replace('\'', "''")
            ),
        );
    }

    /// A statement matching `pattern` waits, from now on until
    /// [`Hold::release`].
    pub fn wait_at(&mut self, pattern: &str) {
        let url = admin_url(&self.db);
        let client = self.runtime.block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            client
                .query_one(&format!("SELECT pg_advisory_lock({HOLD_LOCK})::text"), &[])
                .await
                .unwrap();
            client
        });
        self.holder = Some(client);
        admin_sql(
            &self.db,
            &format!(
                "INSERT INTO public.uf_hold VALUES ('{}', true)",
                pattern.replace('\'', "''")
            ),
        );
    }

    /// Whether a statement is waiting at the hold now.
    pub fn waiting(&self) -> bool {
        admin_sql(
            &self.db,
            &format!(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = ({HOLD_LOCK} & 4294967295)::oid AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ),
        ) != "0"
    }

    /// Waits until a statement waits at the hold.
    pub fn until_waiting(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !self.waiting() {
            assert!(
                std::time::Instant::now() < deadline,
                "no statement reached the hold"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Lets waiting statements go (statements set to fail still fail).
    pub fn release(&mut self) {
        admin_sql(&self.db, "DELETE FROM public.uf_hold WHERE wait");
        if let Some(client) = self.holder.take() {
            self.runtime.block_on(async {
                client
                    .batch_execute(&format!("SELECT pg_advisory_unlock({HOLD_LOCK})"))
                    .await
                    .unwrap();
            });
        }
    }

    /// No statement fails or waits any more.
    pub fn clear(&mut self) {
        self.release();
        admin_sql(&self.db, "DELETE FROM public.uf_hold");
    }

    /// Drops the event trigger.
    pub fn remove(mut self) {
        self.clear();
        admin_sql(
            &self.db,
            "DROP EVENT TRIGGER uf_hold; DROP FUNCTION public.uf_hold(); DROP TABLE public.uf_hold",
        );
    }
}

/// pgbench running `script` on `db` as the login role for `seconds`, 4
/// clients (deadlocks with a change retried), in the background.
fn pgbench(db: &str, script: &std::path::Path, seconds: u32) -> std::process::Child {
    std::process::Command::new("pgbench")
        .args([
            "-n",
            "-c",
            "4",
            "-j",
            "2",
            "--max-tries",
            "10",
            "-T",
            &seconds.to_string(),
            "-f",
        ])
        .arg(script)
        .args(["-h", "127.0.0.1", "-p", &port(), "-U", "uuidforge", db])
        .env("PGPASSWORD", "uuidforge")
        .env("PGCLUSTER", "15/main")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pgbench (from the PostgreSQL server package)")
}

/// An application writing beside a change: pgbench running `script` in
/// rounds of a few seconds, one after the other, until the change has
/// ended and one whole round more has run. However long the change takes
/// on a busy machine, some writes come after it.
pub struct Writers {
    change_ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
    rounds: std::thread::JoinHandle<Vec<std::process::Output>>,
}

/// What the writers' rounds reported.
pub struct WritersReport {
    /// Every round's output and errors, one after the other.
    pub text: String,
    /// Every round exited 0, reported no failed transaction and no aborted
    /// client.
    pub all_succeeded: bool,
    /// How many rounds ran.
    pub rounds: usize,
}

impl Writers {
    /// Seconds of one round: short, so that the last one ends soon after
    /// the change.
    const ROUND_SECONDS: u32 = 5;

    /// Starts the writers on `db`.
    pub fn start(db: &str, script: &std::path::Path) -> Writers {
        let change_ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = change_ended.clone();
        let (db, script) = (db.to_string(), script.to_path_buf());
        let rounds = std::thread::spawn(move || {
            let mut rounds = Vec::new();
            loop {
                let after_the_change = ended.load(std::sync::atomic::Ordering::SeqCst);
                let round = pgbench(&db, &script, Self::ROUND_SECONDS);
                rounds.push(round.wait_with_output().unwrap());
                if after_the_change {
                    return rounds;
                }
            }
        });
        Writers {
            change_ended,
            rounds,
        }
    }

    /// Called once the change has ended: waits for a round that started
    /// after it, then stops.
    pub fn finish(self) -> WritersReport {
        self.change_ended
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let rounds = self.rounds.join().unwrap();
        let mut text = String::new();
        let mut all_succeeded = true;
        for (i, round) in rounds.iter().enumerate() {
            let out = String::from_utf8_lossy(&round.stdout).to_string()
                + &String::from_utf8_lossy(&round.stderr);
            all_succeeded &= round.status.success()
                && out.contains("number of failed transactions: 0")
                && !out.contains("aborted");
            text += &format!("-- round {}\n{out}", i + 1);
        }
        WritersReport {
            text,
            all_succeeded,
            rounds: rounds.len(),
        }
    }
}

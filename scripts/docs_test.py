"""Runs the documentation: every shell, console, SQL and Python block of
README.md, docs/*.md, python/README.md and the crates' README.md, against
the real servers, and checks the README's tables against the code.

    python3 scripts/docs_test.py [FILE...]      (scripts/docs-test.sh sets up)

Blocks, by their fence:
  ```sh       run by bash (errexit, pipefail) in the document's directory;
              passes when it exits 0
  ```console  a transcript: each `$ command` (a trailing backslash
              continues it) is run alone and its standard output compared
              with the lines under it, in the manner of trycmd: a line
              `...` stands for any lines, `[..]` for any text within a
              line; a last line `? N` expects exit status N (else 0)
  ```sql      run by psql (ON_ERROR_STOP) as role `me` in database `shop`
              (or as a directive says); passes when no statement fails
  ```python   run in one namespace per document by the Python of the
              documents' virtual environment (the wheel a block installed);
              a block with `>>>` lines is a doctest and its outputs checked

A block whose first line is `# not run: REASON` (`-- not run: REASON` in
SQL) is listed with its reason and not run: the reason is visible to the
reader in the block itself.

Directives, in HTML comments (invisible when rendered) on the lines just
above a block, set up what a reader already has:
  <!-- docs-test: setup: SHELL -->   run before the block (files, data)
  <!-- docs-test: env: NAME=VALUE ... --> environment variables for it
  <!-- docs-test: env-from: SHELL -->  variables from the NAME=VALUE lines
                                       a command prints (this machine's
                                       paths a reader knows for theirs)
  <!-- docs-test: in: checkout|document -->  where it runs (below)
  <!-- docs-test: sql: database=NAME user=NAME -->
  <!-- docs-test: timeout: SECONDS -->  (default 600)

A document whose first lines hold <!-- docs-test: run-by: SCRIPT ... -->
is run by that script (which sets up what it needs), only when named.

Each document has a fresh directory under target/docs-test/, its $HOME (a
~/.pgpass for the role `me`) and the directory its blocks run in - except
a block that runs the checkout's scripts (`./scripts/`), which runs in the
checkout, as the reader would (`<!-- docs-test: in: checkout|document -->`
says otherwise). First on PATH: a `sudo` that runs the command as root
or, with -u, as that user (this machine's tests run as root), the
document's virtual environment (made when the document installs or runs
Python) and the workspace's `uuidforge`.

Besides the blocks, the README is checked against the code: its list of
subcommands against `uuidforge --help`, its table of library modules
against crates/uuidforge/src/lib.rs, its list of documents against docs/,
and every relative link of every document against the files present.
Setups find the checkout in $CHECKOUT."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "docs-test"
LANGS = {"sh", "console", "sql", "python"}
NOT_RUN = re.compile(r"^\s*(?:#|--)\s*not run:\s*(\S.*)$")
DIRECTIVE = re.compile(r"^<!--\s*docs-test:\s*(\w[\w-]*):\s*(.*?)\s*-->$")


def documents():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "python" / "README.md"]
    docs += sorted(ROOT.glob("crates/*/README.md"))
    return [d for d in docs if d.exists()]


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    text: str
    directives: list = field(default_factory=list)

    @property
    def where(self):
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    def not_run(self):
        first = self.text.split("\n", 1)[0]
        m = NOT_RUN.match(first)
        return m.group(1) if m else None

    def directive(self, key):
        return [v for k, v in self.directives if k == key]


def blocks(doc):
    """The fenced blocks of a document with the directives just above."""
    lines = doc.read_text().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\S*)", lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if lang not in LANGS:
            continue
        directives, j = [], start - 1
        while j >= 0 and DIRECTIVE.match(lines[j].strip()):
            d = DIRECTIVE.match(lines[j].strip())
            directives.insert(0, (d.group(1), d.group(2)))
            j -= 1
        out.append(Block(doc, start + 1, lang, "\n".join(body), directives))
    return out


# --- the environment ---------------------------------------------------------

SUDO = """#!/bin/sh
# sudo for the documents' tests, which run as root: runs the command (with
# NAME=VALUE assignments first, as sudo takes them), as USER with -u USER.
# Like sudo's env_reset, the caller's connection settings do not pass.
for name in $(env | sed -n 's/^\\(PG[A-Z]*\\|DATABASE_URL\\)=.*/\\1/p'); do unset "$name"; done
if [ "$1" = -u ]; then user=$2; shift 2; exec runuser -u "$user" -- env "$@"; fi
exec env "$@"
"""


def psql_admin(sql, database="postgres"):
    subprocess.run(["runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
                    "-d", database, "-c", sql], check=True, stdout=subprocess.DEVNULL)


def databases():
    """The reader's databases: role `me` (password `me`), `shop` (its
    customers and orders keyed by UUIDs, one order carrying the README's
    example value, and products keyed by bigserial, which order lines
    reference),
    `scratch`, `mydb` and `app`, made again for each document."""
    psql_admin("""DO $$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'me') THEN
          CREATE ROLE me LOGIN PASSWORD 'me' CREATEDB;
        END IF; END $$""")
    for db in ["shop", "scratch", "mydb", "app"]:
        psql_admin(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        psql_admin(f"CREATE DATABASE {db} OWNER me")
    psql_admin("""
        SET ROLE me;
        CREATE TABLE customers (id uuid PRIMARY KEY, name text NOT NULL);
        CREATE TABLE orders (
          id uuid PRIMARY KEY,
          customer_id uuid NOT NULL REFERENCES customers,
          payload jsonb NOT NULL,
          created_at timestamptz NOT NULL);
        INSERT INTO customers
        SELECT ('01890a5d-ac96-7' || lpad(to_hex(g), 3, '0') || '-8000-' || lpad(to_hex(g), 12, '0'))::uuid,
               'customer ' || g
          FROM generate_series(1, 100) g;
        INSERT INTO orders
        SELECT CASE g WHEN 42 THEN '017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid
                      ELSE ('0190d6a2-3f7e-7' || lpad(to_hex(g % 4096), 3, '0') || '-9' || lpad(to_hex(g), 3, '0')
                            || '-' || lpad(to_hex(g), 12, '0'))::uuid END,
               ('01890a5d-ac96-7' || lpad(to_hex(1 + g % 100), 3, '0') || '-8000-' || lpad(to_hex(1 + g % 100), 12, '0'))::uuid,
               jsonb_build_object('items', jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'n', g % 3 + 1))),
               timestamptz '2024-01-01' + make_interval(hours => g)
          FROM generate_series(1, 1000) g;
        CREATE TABLE products (id bigserial PRIMARY KEY, name text NOT NULL);
        CREATE TABLE order_lines (
          order_id uuid NOT NULL REFERENCES orders,
          product_id bigint NOT NULL REFERENCES products,
          quantity int NOT NULL,
          PRIMARY KEY (order_id, product_id));
        INSERT INTO products (name) SELECT 'product ' || g FROM generate_series(1, 50) g;
        INSERT INTO order_lines SELECT o.id, 1 + (row_number() OVER () % 50), 1 FROM orders o;
        ANALYZE customers, orders, products, order_lines;""", "shop")


class Document:
    """One document's directory, environment and Python session."""

    def __init__(self, doc):
        self.doc = doc
        slug = str(doc.relative_to(ROOT)).replace("/", "_").removesuffix(".md")
        self.dir = WORK / slug
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        shims = WORK / "bin"
        shims.mkdir(parents=True, exist_ok=True)
        (shims / "sudo").write_text(SUDO)
        (shims / "sudo").chmod(0o755)
        pgpass = self.dir / ".pgpass"
        pgpass.write_text("".join(f"{h}:5432:*:me:me\n" for h in ["localhost", "127.0.0.1", "::1"]))
        pgpass.chmod(0o600)
        binary = Path(os.environ.get("UUIDFORGE_BIN", ROOT / "target" / "debug" / "uuidforge"))
        self.venv = self.dir / ".venv"
        self.env = dict(os.environ)
        # The reader's toolchains stay where they are installed.
        home = Path(os.environ.get("HOME", "/root"))
        self.env.setdefault("RUSTUP_HOME", str(home / ".rustup"))
        self.env.setdefault("CARGO_HOME", str(home / ".cargo"))
        self.env.update(
            HOME=str(self.dir),
            CHECKOUT=str(ROOT),
            PGPASSFILE=str(pgpass),
            VIRTUAL_ENV=str(self.venv),
            PATH=os.pathsep.join([str(shims), str(self.venv / "bin"), str(binary.parent),
                                  os.environ["PATH"]]),
        )
        text = doc.read_text()
        if "```python" in text or "pip install" in text:
            subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
        self.python = []

    def shell(self, script, env, timeout, cwd=None):
        # A reader answers yes to the questions the commands ask (apt-get
        # purge's "Do you want to continue?").
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd or self.dir, env=env,
                              input="y\n" * 100, capture_output=True, text=True, timeout=timeout)


def block_env(doc, block):
    env = dict(doc.env)
    for assignments in block.directive("env"):
        for assignment in shlex.split(assignments):
            name, _, value = assignment.partition("=")
            env[name] = value
    for command in block.directive("env-from"):
        r = subprocess.run(["bash", "-c", command], cwd=doc.dir, env=env, capture_output=True,
                           text=True, check=True)
        for line in r.stdout.splitlines():
            name, sep, value = line.partition("=")
            if sep:
                env[name] = value
    return env


def run_by(doc):
    """The script that runs this document (a run-by directive in its first
    lines), if any."""
    for line in doc.read_text().split("\n")[:5]:
        m = DIRECTIVE.match(line.strip())
        if m and m.group(1) == "run-by":
            return m.group(2)
    return None


def matches(expected, actual):
    """trycmd's wildcards: a line `...` matches any lines, `[..]` any text
    within a line."""
    def line_ok(pattern, line):
        parts = [re.escape(p) for p in pattern.split("[..]")]
        return re.fullmatch(".*".join(parts), line) is not None

    def go(e, a):
        if not e:
            return not a
        if e[0] == "...":
            return any(go(e[1:], a[k:]) for k in range(len(a) + 1))
        return bool(a) and line_ok(e[0], a[0]) and go(e[1:], a[1:])

    return go(expected, actual)


def transcript(text):
    """The commands of a console block with their expected output and
    exit status."""
    items, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            i += 1
            continue
        command = lines[i][2:]
        while command.endswith("\\") and i + 1 < len(lines):
            i += 1
            command = command[:-1] + "\n" + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        while expected and not expected[-1].strip():
            expected.pop()
        status = 0
        if expected and re.fullmatch(r"\? \d+", expected[-1]):
            status = int(expected.pop()[2:])
        items.append((command, expected, status))
    return items


def run_block(doc, block):
    """None when it passed, else what went wrong."""
    env = block_env(doc, block)
    timeout = int((block.directive("timeout") or ["600"])[0])
    place = (block.directive("in") or ["checkout" if "./scripts/" in block.text else "document"])[0]
    cwd = ROOT if place == "checkout" else doc.dir
    for setup in block.directive("setup"):
        r = doc.shell(setup, env, timeout)
        if r.returncode:
            return f"its setup failed ({setup}):\n{r.stdout}{r.stderr}"
    if block.lang == "sh":
        r = doc.shell(block.text, env, timeout, cwd)
        if r.returncode:
            return f"exit {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    elif block.lang == "console":
        items = transcript(block.text)
        if not items:
            return "a console block without a `$ ` command"
        for command, expected, status in items:
            r = doc.shell(command, env, timeout, cwd)
            actual = [line.rstrip() for line in r.stdout.rstrip("\n").split("\n")] if r.stdout else []
            if r.returncode != status:
                return f"`{command}`: exit {r.returncode}, expected {status}\n{r.stdout}{r.stderr}"
            if not matches([e.rstrip() for e in expected], actual):
                return (f"`{command}`: its output differs from the document's\n--- document\n"
                        + "\n".join(expected) + "\n--- actual\n" + "\n".join(actual))
    elif block.lang == "sql":
        settings = dict(kv.split("=", 1) for d in block.directive("sql") for kv in d.split())
        database, user = settings.get("database", "shop"), settings.get("user", "me")
        command = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", database]
        if user == "postgres":
            command = ["runuser", "-u", "postgres", "--", *command]
        else:
            command += ["-h", "localhost", "-U", user]
        r = subprocess.run(command, input=block.text, cwd=doc.dir, env=env, capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode:
            return f"psql exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    elif block.lang == "python":
        return run_python(doc, block, env, timeout)
    return None


PYTHON_SESSION = r"""
import doctest, json, sys, traceback
namespace = {"__name__": "__docs__"}
for block in json.load(sys.stdin):
    if ">>>" in block["text"]:
        test = doctest.DocTestParser().get_doctest(block["text"], namespace, block["where"], block["where"], 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        out = []
        runner.run(test, out=out.append, clear_globs=False)
        namespace.update(test.globs)  # a DocTest runs in a copy of them
        result = "".join(out) if runner.failures else None
    else:
        try:
            exec(compile(block["text"], block["where"], "exec"), namespace)
            result = None
        except Exception:
            result = traceback.format_exc()
    print(json.dumps({"where": block["where"], "error": result}), flush=True)
"""


def run_python(doc, block, env, timeout):
    """Python blocks run in one namespace per document: every block of the
    document so far runs again in a fresh interpreter (a block may use
    what an earlier one made), and this block's result is the last."""
    doc.python.append({"where": block.where, "text": block.text})
    python = doc.venv / "bin" / "python"
    if not python.exists():
        return "no virtual environment: an earlier block makes target/... .venv and installs the wheel"
    r = subprocess.run([str(python), "-c", PYTHON_SESSION], input=json.dumps(doc.python), cwd=doc.dir,
                       env=env, capture_output=True, text=True, timeout=timeout)
    results = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode or len(results) != len(doc.python):
        return f"python exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    earlier = [x for x in results[:-1] if x["error"]]
    if earlier:
        doc.python.pop()
        return f"an earlier block failed again: {earlier[0]['where']}"
    if results[-1]["error"]:
        doc.python.pop()
        return results[-1]["error"]
    return None


# --- the README against the code --------------------------------------------

def readme_checks():
    failures = []
    readme = (ROOT / "README.md").read_text()
    binary = os.environ.get("UUIDFORGE_BIN", str(ROOT / "target" / "debug" / "uuidforge"))
    helptext = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    commands = set()
    in_commands = False
    for line in helptext.split("\n"):
        if line.startswith("Commands:"):
            in_commands = True
            continue
        if in_commands:
            m = re.match(r"^  (\S+)\s", line + " ")
            if not m:
                break
            if m.group(1) != "help":
                commands.add(m.group(1))
    row = next((line for line in readme.split("\n") if line.startswith("| `crates/uuidforge-cli`")), "")
    listed = set(re.findall(r"`([a-z][a-z0-9-]*)`", row.split("|")[2] if row.count("|") > 2 else "")) - {"uuidforge"}
    if listed != commands:
        failures.append(f"README.md: the CLI row lists {sorted(listed)}; `uuidforge --help` has "
                        f"{sorted(commands)}")
    lib = (ROOT / "crates" / "uuidforge" / "src" / "lib.rs").read_text()
    modules = set(re.findall(r"^pub mod (\w+)\s*[;{]", lib, re.M))
    # The table under "Library modules": its rows' first cells.
    lines = readme.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("Library modules")), None)
    table = set()
    if start is None:
        failures.append("README.md: no table of library modules (a paragraph starting 'Library modules')")
    else:
        i = start
        while i < len(lines) and not lines[i].startswith("|"):
            i += 1
        while i < len(lines) and lines[i].startswith("|"):
            table.update(re.findall(r"`(\w+)`", lines[i].split("|")[1]))
            i += 1
    if table and table != modules:
        failures.append(f"README.md: the library's table lists {sorted(table - modules)} that lib.rs "
                        f"does not have and lacks {sorted(modules - table)}")
    listing = readme.split("\n## Documents\n", 1)[-1].split("\n## ", 1)[0] if "\n## Documents\n" in readme else ""
    for doc in sorted((ROOT / "docs").glob("*.md")):
        if f"](docs/{doc.name})" not in listing:
            failures.append(f"README.md: its Documents section does not link docs/{doc.name}")
    for doc in documents():
        text = doc.read_text()
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
                continue
            path = (doc.parent / target).resolve()
            if not path.exists() or ROOT not in path.parents:
                failures.append(f"{doc.relative_to(ROOT)}: a link to {target}, which is not in the repository")
        if "../shared" in text:
            failures.append(f"{doc.relative_to(ROOT)}: points to ../shared, outside the repository")
    return failures


def main():
    chosen = [Path(a).resolve() for a in sys.argv[1:]] or documents()
    WORK.mkdir(parents=True, exist_ok=True)
    failed, ran, skipped = [], 0, []
    started = time.monotonic()
    for path in chosen:
        if not sys.argv[1:] and run_by(path):
            print(f"elsewhere {path.relative_to(ROOT)}: run by {run_by(path)}")
            continue
        doc = Document(path)
        databases()
        for block in blocks(path):
            reason = block.not_run()
            if reason is not None:
                skipped.append((block.where, reason))
                print(f"not run  {block.where} {block.lang}: {reason}")
                continue
            t = time.monotonic()
            try:
                error = run_block(doc, block)
            except subprocess.TimeoutExpired as e:
                error = f"timed out after {e.timeout} s"
            ran += 1
            took = time.monotonic() - t
            if error:
                failed.append(block.where)
                print(f"FAILED   {block.where} {block.lang} ({took:.1f} s)\n{block.text}\n--- what went wrong\n{error}\n")
            else:
                print(f"ok       {block.where} {block.lang} ({took:.1f} s)")
    if not sys.argv[1:]:
        for failure in readme_checks():
            failed.append(failure)
            print(f"FAILED   {failure}")
    print(f"docs: {ran} blocks run, {len(skipped)} not run (each says why), {len(failed)} failed, "
          f"{time.monotonic() - started:.0f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Tests of the HTTP service and web page that need more than cargo:
#   1. node --test: uuid-chips.js against the Rust golden vectors;
#   2. the page end to end in headless Debian chromium (playwright-core);
#   3. schemathesis (PyPI) against /api/openapi.json.
# Installs what it needs (chromium from Debian, playwright-core from npm,
# schemathesis into target/st-venv); downloads no browser. Called by
# scripts/test.sh; usable alone (it builds the command line unless UUIDFORGE_BIN names it).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "== web-test: $*"; }
web=crates/uuidforge-server/web
out=target/web-test
mkdir -p "$out"

if [ ! -x /usr/bin/chromium ]; then
  say "installing chromium (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if [ ! -d "$web/e2e/node_modules/playwright-core" ]; then
  say "installing playwright-core (npm ci)"
  (cd "$web/e2e" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
fi
if [ ! -x target/st-venv/bin/st ]; then
  say "installing schemathesis (PyPI) into target/st-venv"
  python3 -m venv target/st-venv
  target/st-venv/bin/pip install -q 'schemathesis==4.32.5'
fi

say "node --test (identicon golden vectors, UUIDs in text, Base32, times)"
node --test --test-reporter=spec "$web/tests/"

# The binary the test command built (UUIDFORGE_BIN), else this one.
bin=${UUIDFORGE_BIN:-}
if [ -z "$bin" ]; then
  cargo build -q -p uuidforge-cli
  bin=target/debug/uuidforge
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
names="$out/names.redb"
rm -f "$names" "$out/plain-names.redb"
say "database of the Database view: uuidforge_web_e2e ($web/e2e/fixture.sql), read as role uuidforge"
export PGPASSWORD=uuidforge
psql -Xq -h 127.0.0.1 -U uuidforge_admin -d postgres \
  -c "DROP DATABASE IF EXISTS uuidforge_web_e2e WITH (FORCE)" \
  -c "CREATE DATABASE uuidforge_web_e2e OWNER uuidforge"
psql -Xq -v ON_ERROR_STOP=1 -h 127.0.0.1 -U uuidforge -d uuidforge_web_e2e -f "$web/e2e/fixture.sql"
unset PGPASSWORD
db="postgres://uuidforge:uuidforge@127.0.0.1:5432/uuidforge_web_e2e"
rm -f "$out/hide.key"
"$bin" hide --new-key "$out/hide.key" 2>/dev/null
# The token the page and the API tests use (a server without --token makes
# its own; a test of that is in crates/uuidforge-cli/tests/cli_serve.rs).
UUIDFORGE_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
export UUIDFORGE_TOKEN
"$bin" serve --bind "127.0.0.1:$port" --names-db "$names" --db "$db" \
  --hide-key-file "$out/hide.key" 2>"$out/server.log" &
server=$!
# A second server without a database: its /db page explains how to start one.
plain_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --bind "127.0.0.1:$plain_port" --names-db "$out/plain-names.redb" 2>"$out/plain-server.log" &
plain=$!
trap 'kill $server $plain 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fs "$base/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fs "$base/healthz" >/dev/null || { cat "$out/server.log"; exit 1; }
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$plain_port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done

say "end to end in headless chromium"
node "$web/e2e/e2e.mjs" "$base" "$out" "http://127.0.0.1:$plain_port"

say "schemathesis against $base/api/openapi.json"
target/st-venv/bin/st --config-file crates/uuidforge-server/api/schemathesis.toml \
  run "$base/api/openapi.json" --url "$base" --header "Authorization: Bearer $UUIDFORGE_TOKEN" \
  --checks all --max-examples 60 --no-color \
  --report junit --report-dir "$out/schemathesis" 2>&1 | tail -25
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { say "schemathesis found failures (exit $status)"; exit "$status"; }

kill -TERM $server $plain
wait $server || { say "the server did not exit cleanly"; cat "$out/server.log"; exit 1; }
wait $plain || true
trap - EXIT
grep -q "SIGTERM: shutting down" "$out/server.log"
say "passed; screenshots and logs in $out"

#!/usr/bin/env bash
# Sets up what the tests need on a fresh machine, then runs all of them:
# formatting, lints, the conformance file check, unit/property/integration
# tests, the PostgreSQL extension against the real server (regression suite
# and concurrent writers, with and without shared_preload_libraries), the
# web page and API (node --test, headless chromium, schemathesis), and a
# short fuzzing run of every parser.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS="${FUZZ_SECONDS:-15}"

step() { printf '\n== %s\n' "$*"; }

step "toolchain"
cargo --version
rustup component list --installed 2>/dev/null | grep -E '^(rustfmt|clippy)' || rustup component add rustfmt clippy
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

step "PostgreSQL 15, cargo-pgrx and the extension (scripts/pg-setup.sh)"
./scripts/pg-setup.sh

step "test data sets (scripts/test-data.sh)"
./scripts/test-data.sh

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "rustdoc (broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p uuidforge -p uuidforge-server -p uuidforge-grep -p uuidforge-model -p uuidforge-host --all-features --quiet

step "conformance vectors match their independent generator"
python3 conformance/generate.py | diff -u conformance/vectors.json - \
  || { echo "conformance/vectors.json is stale: run python3 conformance/generate.py > conformance/vectors.json"; exit 1; }

step "cargo test"
# The extension links against the server's symbols: it is tested inside
# the server below, not by a test binary.
cargo test --workspace --exclude uuidforge-pg --all-features

step "web page and API: node --test, headless chromium, schemathesis (scripts/web-test.sh)"
./scripts/web-test.sh

step "PostgreSQL extension: regression suite and concurrent writers"
./crates/uuidforge-pg/tests/run.sh

step "fuzz every parser for ${FUZZ_SECONDS}s each"
(
  cd crates/uuidforge
  for target in parse base32 uuid192; do
    cargo +nightly fuzz run "$target" -- -max_total_time="$FUZZ_SECONDS" 2>&1 | tail -n 3
  done
)
(
  cd crates/uuidforge-grep
  cargo +nightly fuzz run documents -- -max_total_time="$FUZZ_SECONDS" 2>&1 | tail -n 3
)

echo
echo "all tests passed"

